"""Small file helpers shared by the run's stores (response cache, web cassettes, memory
snapshots, reports): content keys and atomic JSON writes."""

from __future__ import annotations

import array
import errno
import hashlib
import itertools
import json
import os
import re
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _read_umask() -> int:
    """The process's umask, read once at import: reading it means setting it, which must not
    happen while generation threads create files."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def content_key(data: Any) -> str:
    """sha256 of the canonical JSON of ``data`` (key order and spacing do not matter)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def json_bytes(payload: Any, indent: int | None = None, default: Any = None) -> bytes:
    """UTF-8 JSON of ``payload``. One that holds lone surrogates (a model's answer can), which
    UTF-8 cannot encode, is written with ASCII escapes instead: read back exactly."""
    text = json.dumps(payload, indent=indent, ensure_ascii=False, default=default)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, indent=indent, ensure_ascii=True, default=default).encode()


def write_json_atomic(path: Path, payload: Any, indent: int | None = 2) -> None:
    """Write via a temporary file and rename, so a killed run never leaves half a file
    (readers see the old content or the new, and concurrent writers never mix)."""
    data = json_bytes(payload, indent) + b"\n"
    _write_atomic(path, "wb", lambda fh: fh.write(data))


def write_text_atomic(path: Path, text: str | list[str], errors: str = "strict") -> None:
    """UTF-8 text (whole, or in pieces) written as :func:`write_json_atomic` writes."""
    pieces = [text] if isinstance(text, str) else text
    _write_atomic(path, "w", lambda fh: fh.writelines(pieces), errors)


def _write_atomic(
    path: Path, mode: str, write: Callable[[Any], Any], errors: str | None = None
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 would make the files unreadable to others
    try:
        text = "b" not in mode
        with os.fdopen(fd, mode, encoding="utf-8" if text else None, errors=errors) as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)  # a disk that filled up keeps no half-written copy
        raise


class DiskWarning(UserWarning):
    """A place the run writes to failed (a full or read-only disk): nothing more is written
    there; the run goes on."""


def os_error_text(exc: OSError) -> str:
    """``[Errno 28] No space left on device (ENOSPC)``: the number, the words, the name."""
    name = errno.errorcode.get(exc.errno or 0)
    words = exc.strerror or str(exc)
    if exc.errno is None:  # not from the system: its words alone
        return words
    return f"[Errno {exc.errno}] {words}" + (f" ({name})" if name else "")


class WritePlace:
    """One place the run writes to (the results directory, the response cache). Its first
    failed write (ENOSPC, EROFS, EACCES, ...) stops further writes there, with one warning
    naming the path and the error: the run goes on scoring, instead of an error per entry."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.failure: str | None = None
        self._lock = threading.Lock()

    @property
    def stopped(self) -> bool:
        return self.failure is not None

    def failed(self, path: Path, exc: OSError) -> None:
        with self._lock:
            if self.failure is not None:
                return
            self.failure = (
                f"pytest-bfcl: cannot write the {self.what} at {path}: {os_error_text(exc)}; "
                "nothing more is written there in this run (scoring goes on)"
            )
        warnings.warn(self.failure, DiskWarning, stacklevel=3)


# JSON strings, found in constant memory: escapes are dropped first (an escaped backslash, then
# an escaped quote: the other escapes hold no quote or bracket), then strings run quote to quote.
# (One pattern repeating an alternation inside a string costs the regex engine about 120 bytes a
# character: gigabytes for a long string in a hostile file.)
_JSON_STRING = re.compile(r'"[^"]*"')
# Brackets as signed bytes: +1 opens, -1 closes; their running sum is the depth.
_STEPS = bytes(1 if c in b"[{" else 255 if c in b"]}" else 0 for c in range(256))
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings do not
    count), found without parsing: a text nested past the parser's recursion limit makes
    ``json.loads`` raise ``RecursionError``, after using a deep C stack."""
    # A backslash outside a string stops the parser where it stands: up to there both agree.
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    outside = _JSON_STRING.sub("", unescaped).encode("utf-8", "surrogatepass")
    steps = array.array("b", outside.translate(_STEPS, _NOT_BRACKETS))
    return max(0, max(itertools.accumulate(steps), default=0))  # summed in C, not per character


def loads_bounded(text: str, max_depth: int) -> Any:
    """``json.loads`` of a text nested at most ``max_depth`` deep; ``ValueError`` otherwise."""
    depth = json_depth(text)
    if depth > max_depth:
        raise ValueError(f"nested {depth} deep (at most {max_depth})")
    return json.loads(text)


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, read without trusting it: a FIFO
    would block, a device (``/dev/zero``) never ends, a directory is no file. ``OSError`` with
    what is wrong otherwise (the caller names the file)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes ({info.st_size})")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while read
        raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes")
    return data
