"""Generating ahead of the items: many requests in flight while pytest reports entries one by
one in its own order.

The scheduler knows nothing of the engine: it is handed the function that generates one entry
and the order to start them in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.models import Entry

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
            rate = self.done / elapsed if elapsed > 0 else 0.0
            return (
                f"bfcl: {self.done}/{total} generated, {self.in_flight} in flight, "
                f"{self.failed} failed, {rate:.1f} entries/s"
            )


def expected_requests(entry: Entry) -> int:
    """A rough count of the requests an entry needs (turns, for a conversation)."""
    kind = CATEGORIES[entry.category].kind
    if kind is Kind.MULTI_TURN:
        return 2 * len(entry.question)
    if kind in (Kind.MEMORY, Kind.WEB_SEARCH):
        return 3
    return 1


def start_order(entry: Entry) -> tuple[int, int]:
    """Longest first: a long conversation started last would leave the server idle while it
    finishes. Memory questions are interleaved by scenario (the k-th question of each scenario
    before any (k+1)-th), so the first wave starts every scenario's prerequisites at once
    instead of queueing behind one scenario."""
    rank = 0
    if CATEGORIES[entry.category].kind is Kind.MEMORY:
        tail = entry.id.rsplit("-", 1)[-1]
        rank = int(tail) if tail.isdigit() else 0
    return (-expected_requests(entry), rank)


class Scheduler(Generic[T]):
    """Starts ``generate(id)`` for many ids on a thread pool and hands each result over when
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
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[str, Future[T]] = {}
        self._submitted: set[str] = set()

    def prefetch(self, entry_ids: list[str], concurrency: int | None = None) -> None:
        """Start generating these entries, ``concurrency`` at a time (xdist workers share the
        run's concurrency). May be called again with more entries (an xdist worker learns its
        items in batches)."""
        if not self._enabled:
            return
        new = [i for i in entry_ids if i not in self._submitted]
        if not new:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=concurrency or self._concurrency, thread_name_prefix="bfcl-generate"
            )
        for entry_id in sorted(new, key=self._order):  # type: ignore[arg-type]
            self._submitted.add(entry_id)
            self._futures[entry_id] = self._pool.submit(self._generate, entry_id)

    def result(self, entry_id: str) -> T:
        """The prefetched result of an entry (waiting for it), or a new one."""
        future = self._futures.pop(entry_id, None)
        return future.result() if future is not None else self._generate(entry_id)

    def close(self) -> None:
        """Stop: queued generations are cancelled, running ones are not waited for."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self._futures.clear()
