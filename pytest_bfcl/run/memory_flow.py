"""The two-stage memory flow: a scenario's prerequisite conversations fill the memory, then every
question of the scenario starts from the memory they left.

For each (memory backend, scenario) the prerequisite conversations run once per session, in
order, each starting from the snapshot the previous one left. Each leaves a checkpoint file, and
the last one the scenario's final snapshot, under
``<root>/agentic/memory/<backend>/memory_snapshot/`` (the reference's layout, kept with the
run's results so a failure can be inspected). Threads of one process wait on a lock; xdist
workers on a file lock, and a worker that finds a snapshot finished earlier in the same session
reads it instead of running the conversations again.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from pytest_bfcl.dataset.layout import ResultLayout
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.files import (
    WritePlace,
    read_small_text,
    refuse_unfit_output,
    write_json_atomic,
    write_text_atomic,
)
from pytest_bfcl.models.base import Generation

# Runs one prerequisite conversation from a snapshot; gives its generation and the new snapshot.
PrerequisiteRunner = Callable[[Entry, dict[str, Any] | None], tuple[Generation, dict[str, Any]]]


class MemoryFlowError(RuntimeError):
    """The prerequisites of a scenario could not be run."""


class MemoryFlow:
    def __init__(
        self,
        prerequisites: Callable[[str, str], list[Entry]],
        run_prerequisite: PrerequisiteRunner,
        root: Path,
        session: str,
        on_generation: Callable[[Generation, str], None] | None = None,
    ) -> None:
        """``prerequisites(category, scenario)``: the scenario's conversations in order.
        ``on_generation(generation, category)``: called for each finished conversation."""
        self.prerequisites = prerequisites
        self.run_prerequisite = run_prerequisite
        self.root = Path(root)
        self.layout = ResultLayout(self.root)
        self.session = session
        self.on_generation = on_generation
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._snapshots: dict[tuple[str, str], dict[str, Any] | None] = {}
        self._failures: dict[tuple[str, str], str] = {}
        self.place = WritePlace("memory snapshots")

    def final_path(self, category: str, scenario: str) -> Path:
        return self.layout.final_snapshot(category, scenario)

    def final_snapshot(self, category: str, scenario: str) -> dict[str, Any] | None:
        """The memory a scenario's questions start from (running its prerequisites first, once
        per session)."""
        key = (category, scenario)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key in self._failures:
                raise MemoryFlowError(self._failures[key])
            if key not in self._snapshots:
                try:
                    self._snapshots[key] = self._shared_snapshot(category, scenario)
                except Exception as exc:
                    message = (
                        f"the memory prerequisites of {category}/{scenario} failed, so its "
                        f"questions cannot run: {type(exc).__name__}: {exc}"
                    )
                    self._failures[key] = message
                    raise MemoryFlowError(message) from exc
            return self._snapshots[key]

    def _shared_snapshot(self, category: str, scenario: str) -> dict[str, Any] | None:
        """Under a file lock: this session's finished snapshot, or run the prerequisites. Where
        the snapshots cannot be written (a full or read-only disk), this process runs them for
        itself, after one warning."""
        final = self.final_path(category, scenario)
        marker = final.with_suffix(".session")
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            lock_file = _open_lock(final.with_suffix(".lock"))
        except OSError as exc:
            self.place.failed(final.parent, exc)
            return self._run(category, scenario)
        with lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                if _small_text(marker, 1024) == self.session:
                    data = _snapshot(final)
                    if data is not None:
                        return data
                snapshot = self._run(category, scenario)
                if not self.place.stopped:  # the snapshot files are whole: others may read them
                    self._store(marker, write_text_atomic, marker, self.session)
                return snapshot
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    def _store(self, path: Path, write: Callable[..., Any], *args: Any) -> None:
        """``write(*args)`` on a snapshot file, unless this place failed before; its first
        failure is one warning, and the flow goes on with the snapshot in memory."""
        if self.place.stopped:
            return
        try:
            write(*args)
        except OSError as exc:
            self.place.failed(path, exc)

    def _run(self, category: str, scenario: str) -> dict[str, Any] | None:
        snapshot: dict[str, Any] | None = None
        checkpoints = self.layout.checkpoint_dir(category)
        final = self.final_path(category, scenario)
        self._store(final, final.unlink, True)  # missing_ok: no stale one after this
        for entry in self.prerequisites(category, scenario):
            generation, snapshot = self.run_prerequisite(entry, snapshot)
            checkpoint = checkpoints / f"{entry.id}.json"
            self._store(checkpoint, write_json_atomic, checkpoint, snapshot, 4)
            self._store(final, write_json_atomic, final, snapshot, 4)
            if self.on_generation is not None:
                self.on_generation(generation, category)
        return snapshot


SNAPSHOT_MAX = 256 << 20  # bytes of a stored memory snapshot read back


def _small_text(path: Path, max_bytes: int) -> str | None:
    """A small file of the flow's folder, or ``None`` (missing, not a regular file, too big)."""
    try:
        return read_small_text(path, max_bytes)
    except (OSError, ValueError):
        return None


def _snapshot(path: Path) -> dict[str, Any] | None:
    """A stored snapshot, or ``None`` where there is none to trust (the flow runs again)."""
    text = _small_text(path, SNAPSHOT_MAX)
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _open_lock(path: Path) -> IO[str]:
    """The flow's lock file, opened without blocking on a FIFO or writing to a device there."""
    refuse_unfit_output(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    return os.fdopen(os.open(path, flags, 0o666), "w")
