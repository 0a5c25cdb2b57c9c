"""Generating ahead of the items: many requests in flight while pytest reports entries one by
one in its own order.

The scheduler knows nothing of the engine: it is handed the function that generates one entry
and the order to start them in.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import CancelledError
from typing import Any, Generic, TypeVar, cast

from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.kinds import kind_of

T = TypeVar("T")


class Progress:
    """Generation counters, updated from any thread: done, in flight, failed, rate."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = self.in_flight = self.failed = 0
        self.first: float | None = None

    def started(self) -> None:
        with self._lock:
            self.in_flight += 1
            if self.first is None:
                self.first = time.perf_counter()

    def finished(self, failed: bool) -> None:
        with self._lock:
            self.in_flight -= 1
            self.done += 1
            self.failed += int(failed)

    def line(self, total: int) -> str:
        with self._lock:
            elapsed = time.perf_counter() - self.first if self.first is not None else 0.0
            return progress_line(self.done, total, self.failed, elapsed, self.in_flight)


class ReportedProgress:
    """The progress an xdist controller sees: entries whose results the workers reported (it
    generates nothing itself), counted from the first report on."""

    def __init__(self) -> None:
        self.done = self.failed = 0
        self.first: float | None = None

    def reported(self, failed: bool) -> None:
        if self.first is None:
            self.first = time.perf_counter()
        self.done += 1
        self.failed += int(failed)

    def line(self, total: int) -> str:
        elapsed = time.perf_counter() - self.first if self.first is not None else 0.0
        return progress_line(self.done, total, self.failed, elapsed)


def progress_line(
    done: int, total: int, failed: int, elapsed: float, in_flight: int | None = None
) -> str:
    """``bfcl: 120/4441 generated, 8 in flight, 0 failed, 3.2 entries/s, about 22m 30s left``
    (in flight only where this process generates)."""
    rate = done / elapsed if elapsed > 0 else 0.0
    flight = f"{in_flight} in flight, " if in_flight is not None else ""
    left = max(total - done, 0)
    eta = ""
    if rate > 0 and left:
        seconds = left / rate
        eta = ", under 1s left" if seconds < 1 else f", about {duration(seconds)} left"
    return f"bfcl: {done}/{total} generated, {flight}{failed} failed, {rate:.1f} entries/s{eta}"


def duration(seconds: float) -> str:
    """``45s``, ``3m 20s``, ``1h 02m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


def start_order(entry: Entry) -> tuple[int, int]:
    """Longest first: a long conversation started last would leave the server idle while it
    finishes; among equals, the kind's own rank (memory interleaves its scenarios)."""
    kind = kind_of(entry.category)
    return (-kind.requests(entry), kind.start_rank(entry))


def interleaved(ids: list[str], order: Callable[[str], Hashable]) -> list[str]:
    """The ids in the order to start them: by ``order`` (longest first) alternating with their
    own order (pytest's, which reports each entry only after those before it). Longest first
    alone keeps the server busy to the end but makes the terminal wait for the first result
    until every long conversation has started (20 s and more on a full run); the alternation
    shows results from the first second, and the long conversations still all start within
    the first half of the run."""
    longest = iter(sorted(ids, key=order))  # type: ignore[arg-type]
    own = iter(ids)
    taken: set[str] = set()
    started: list[str] = []
    while len(started) < len(ids):
        for source in (longest, own):
            for entry_id in source:
                if entry_id not in taken:
                    taken.add(entry_id)
                    started.append(entry_id)
                    break
    return started


class _Workers(Generic[T]):
    """Threads that run ``generate`` on the ids queued to them, in queue order, and keep each
    outcome until it is asked for. concurrent.futures' executor costs about 65 us a task to
    queue (a semaphore handshake per submit: 0.3 s before a 4,441-entry run's first request),
    and a future per entry holds a condition of its own (3 MB for that run); here one
    condition serves all. The threads are daemons: a run that ends (or stops) while requests
    are still out does not wait for them at exit, and an engine nobody closed does not keep
    the process alive."""

    def __init__(self, generate: Callable[[str], T], count: int) -> None:
        self._generate = generate
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._done: dict[str, tuple[bool, Any]] = {}  # id -> (succeeded, result or exception)
        self._changed = threading.Condition()
        self._threads = [
            threading.Thread(target=self._work, name=f"bfcl-generate-{n}", daemon=True)
            for n in range(count)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, entry_id: str) -> None:
        self._queue.put(entry_id)

    def result(self, entry_id: str) -> T:
        """The outcome of a submitted id, once there is one (its exception is raised here)."""
        with self._changed:
            self._changed.wait_for(lambda: entry_id in self._done)
            succeeded, outcome = self._done.pop(entry_id)
        if not succeeded:
            raise outcome
        return cast(T, outcome)

    def has(self, entry_id: str) -> bool:
        """Whether the outcome of a submitted id is there (asking for it would not wait)."""
        return entry_id in self._done

    def shutdown(self) -> None:
        """Cancel what is queued; running generations finish on their own."""
        cancelled = []
        while True:
            try:
                entry_id = self._queue.get_nowait()
            except queue.Empty:
                break
            if entry_id is not None:
                cancelled.append(entry_id)
        with self._changed:
            for entry_id in cancelled:
                self._done[entry_id] = (False, CancelledError(f"{entry_id}: the run stopped"))
            self._changed.notify_all()
        for _ in self._threads:
            self._queue.put(None)

    def _work(self) -> None:
        while (entry_id := self._queue.get()) is not None:
            try:
                done: tuple[bool, Any] = (True, self._generate(entry_id))
            except BaseException as exc:  # the item raises it when it asks for the result
                done = (False, exc)
            with self._changed:
                self._done[entry_id] = done
                self._changed.notify_all()


class Scheduler(Generic[T]):
    """Starts ``generate(id)`` for many ids on worker threads and hands each result over when
    its item asks for it; ids never prefetched are generated on the spot."""

    def __init__(
        self,
        generate: Callable[[str], T],
        order: Callable[[str], Hashable],
        concurrency: int,
        enabled: bool = True,
    ) -> None:
        """``enabled``: whether the model is worth calling concurrently (a local oracle is not:
        generating on demand is cheaper than handing work to threads)."""
        self._generate = generate
        self._order = order
        self._concurrency = concurrency
        self._enabled = enabled
        self._workers: _Workers[T] | None = None
        self._waiting: set[str] = set()  # submitted, not yet handed over
        self._submitted: set[str] = set()

    @property
    def prefetches(self) -> bool:
        """Whether generations are started ahead of their items (not for a local model)."""
        return self._enabled

    def prefetch(self, entry_ids: list[str], concurrency: int | None = None) -> None:
        """Start generating these entries, ``concurrency`` at a time (xdist workers share the
        run's concurrency). May be called again with more entries (an xdist worker learns its
        items in batches)."""
        if not self._enabled:
            return
        new = [i for i in entry_ids if i not in self._submitted]
        if not new:
            return
        if self._workers is None:
            self._workers = _Workers(self._generate, concurrency or self._concurrency)
        for entry_id in interleaved(new, self._order):
            self._submitted.add(entry_id)
            self._waiting.add(entry_id)
            self._workers.submit(entry_id)

    def result(self, entry_id: str) -> T:
        """The prefetched result of an entry (waiting for it), or a new one."""
        if self._workers is not None and entry_id in self._waiting:
            self._waiting.discard(entry_id)
            return self._workers.result(entry_id)
        return self._generate(entry_id)

    def ready(self, entry_id: str) -> bool:
        """Whether asking for this id's result would not wait for a generation in flight (one
        never prefetched is generated on the spot, by a model that is not worth waiting on)."""
        workers = self._workers
        return workers is None or entry_id not in self._waiting or workers.has(entry_id)

    def close(self) -> None:
        """Stop: queued generations are cancelled, running ones are not waited for."""
        if self._workers is not None:
            self._workers.shutdown()
            self._workers = None
        self._waiting.clear()


# Separates an entry id from its sample number in the scheduler's job keys (never in an id).
_SAMPLE_SEP = "\x1f"


def job_key(entry_id: str, sample: int) -> str:
    """The scheduler's key of one sample of an entry (the id itself for the first)."""
    return entry_id if sample == 0 else f"{entry_id}{_SAMPLE_SEP}{sample}"


def split_job_key(key: str) -> tuple[str, int]:
    entry_id, _, sample = key.partition(_SAMPLE_SEP)
    return entry_id, int(sample) if sample else 0
