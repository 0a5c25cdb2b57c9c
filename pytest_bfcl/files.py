"""Small file helpers shared by the run's stores (response cache, web cassettes, memory
snapshots, reports): content keys and atomic JSON writes."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
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


# JSON strings, escapes included (one unambiguous pass: linear time on any text).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings do not
    count), found without parsing: a text nested past the parser's recursion limit makes
    ``json.loads`` raise ``RecursionError``, after using a deep C stack."""
    brackets = _NOT_BRACKETS.sub("", _JSON_STRING.sub("", text))
    depth = deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


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
