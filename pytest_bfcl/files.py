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
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO


def _read_umask() -> int:
    """The process's umask, read once at import: reading it means setting it, which must not
    happen while generation threads create files."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``a character device``)."""
    return next((words for test, words in _FILE_KINDS if test(mode)), "a regular file")


class NotARegularFile(OSError):
    """A path the run reads or writes names a device, a FIFO, a folder or a symbolic link where
    a regular file belongs."""


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


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Bytes written as :func:`write_json_atomic` writes."""
    _write_atomic(path, "wb", lambda fh: fh.write(data))


def write_text_atomic(path: Path, text: str | list[str], errors: str = "strict") -> None:
    """UTF-8 text (whole, or in pieces) written as :func:`write_json_atomic` writes."""
    pieces = [text] if isinstance(text, str) else text
    _write_atomic(path, "w", lambda fh: fh.writelines(pieces), errors)


def _write_atomic(
    path: Path, mode: str, write: Callable[[Any], Any], errors: str | None = None
) -> None:
    refuse_unfit_output(path)
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


def output_problem(path: Path, inputs: Iterable[Path] = ()) -> str | None:
    """Why a file the run writes cannot go to ``path`` (``None``: it can). A write replaces
    what is there through a rename: a device (``/dev/null`` as root), a FIFO or a folder would
    be replaced by a regular file, a symbolic link by a file where the link was; and a file
    that is one of the writer's own ``inputs`` would be lost."""
    try:
        info = os.lstat(path)
    except OSError:  # nothing there (or no way there: the write says why)
        return None
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link; give the path of the file itself"
    if not stat.S_ISREG(info.st_mode):
        return f"is {file_kind(info.st_mode)}; give the path of a file to write"
    for source in inputs:
        try:
            if os.path.samefile(path, source):
                return f"is {source}, one of the files read; give another path"
        except OSError:  # one of them is missing: not the same
            continue
    return None


def refuse_unfit_output(path: Path, inputs: Iterable[Path] = ()) -> None:
    """:class:`NotARegularFile` saying :func:`output_problem`'s reason, if any."""
    problem = output_problem(path, inputs)
    if problem is not None:
        raise NotARegularFile(errno.EINVAL, problem)


class DiskWarning(UserWarning):
    """A place the run writes to failed (a full or read-only disk): nothing more is written
    there; the run goes on."""


def os_error_text(exc: OSError) -> str:
    """``[Errno 28] No space left on device (ENOSPC)``: the number, the words, the name."""
    name = errno.errorcode.get(exc.errno or 0)
    words = exc.strerror or str(exc)
    if exc.errno is None or isinstance(exc, NotARegularFile):  # its words alone
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


def open_regular_file(
    path: Path, max_bytes: int | None = None, follow_symlinks: bool = True
) -> BinaryIO:
    """``path`` opened for reading when it is a regular file (of at most ``max_bytes``), checked
    without trusting it: a FIFO would block, a device (``/dev/zero``) never ends, a directory is
    no file, and neither is ever opened. A symbolic link is followed only to a regular file
    (never with ``follow_symlinks=False``), and what is opened is checked again (it may be
    swapped meanwhile). ``OSError`` saying what is wrong otherwise (the caller names the
    file); for streaming readers, which bound their own reads."""
    info = os.lstat(path)
    how = "is"
    if stat.S_ISLNK(info.st_mode):
        if not follow_symlinks:
            raise NotARegularFile(errno.ELOOP, "is a symbolic link, not a regular file")
        info, how = os.stat(path), "points to"  # where it points, without opening it
    _check_regular(info, max_bytes, how)
    nofollow = 0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | nofollow
    fd = os.open(path, flags)
    try:
        _check_regular(os.fstat(fd), max_bytes, "is")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_file(path: Path, max_bytes: int, follow_symlinks: bool = True) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, opened by
    :func:`open_regular_file`; the read stops at the bound (a file that grows meanwhile)."""
    with open_regular_file(path, max_bytes, follow_symlinks) as fh:
        # a buffer of the file's size, not of the bound: read(n) allocates n bytes up front
        size = min(os.fstat(fh.fileno()).st_size, max_bytes)
        data = fh.read(size + 1)
        if len(data) > size:  # it grew since: read on, up to the bound
            data += fh.read(max_bytes + 1 - len(data))
    if len(data) > max_bytes:  # it grew while read
        raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes")
    return data


def _check_regular(info: os.stat_result, max_bytes: int | None, how: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = file_kind(info.st_mode)
        raise NotARegularFile(errno.EINVAL, f"{how} {kind}, not a regular file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes ({info.st_size})")


def read_file_tail(path: Path, max_bytes: int) -> bytes:
    """The last ``max_bytes`` of a regular file (a log), opened by :func:`open_regular_file`."""
    with open_regular_file(path) as fh:
        fh.seek(max(os.fstat(fh.fileno()).st_size - max_bytes, 0))
        return fh.read(max_bytes)


def read_small_text(path: Path, max_bytes: int, follow_symlinks: bool = True) -> str:
    """UTF-8 text of a small regular file read as :func:`read_regular_file` reads it
    (``ValueError`` for text that is not UTF-8)."""
    return read_regular_file(path, max_bytes, follow_symlinks).decode("utf-8")


def read_problem(exc: OSError | ValueError) -> str:
    """Why a bounded read (or a write, refused by :func:`refuse_unfit_output`) failed, in
    words for one line (``it is a FIFO, not a regular file``)."""
    if isinstance(exc, NotARegularFile):
        return f"it {exc.strerror}"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return f"it is {exc.strerror}"
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8 text"
    return os_error_text(exc) if isinstance(exc, OSError) else str(exc)
