"""Which response-cache records this thread wrote, while a journal is open: a conversation
ended by its budget drops the records of its steps (they are a flood, and the rerun asks
again), without the conversation knowing where, or whether, the model caches.

A conversation's steps are asked one after the other on the thread running it, so the
records written on that thread while its journal is open are its own."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

_local = threading.local()


@contextlib.contextmanager
def journal() -> Iterator[list[Path]]:
    """The records written on this thread inside the block, as they are written."""
    previous = getattr(_local, "written", None)
    written: list[Path] = []
    _local.written = written
    try:
        yield written
    finally:
        _local.written = previous


def note_written(path: Path) -> None:
    """Called by the cache after a record is stored."""
    written = getattr(_local, "written", None)
    if written is not None:
        written.append(path)


def forget(written: list[Path]) -> None:
    """Remove these records (one already gone, or unremovable, is left to the next run)."""
    for path in written:
        with contextlib.suppress(OSError):
            path.unlink()
