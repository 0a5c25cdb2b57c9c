"""Small file helpers shared by the run's stores (response cache, web cassettes, memory
snapshots, reports): content keys and atomic JSON writes."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
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


def write_json_atomic(path: Path, payload: Any, indent: int | None = 2) -> None:
    """Write via a temporary file and rename, so a killed run never leaves half a file
    (readers see the old content or the new, and concurrent writers never mix)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 would make the files unreadable to others
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=indent, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
