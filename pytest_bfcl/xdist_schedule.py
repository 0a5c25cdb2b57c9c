"""How an xdist controller hands BFCL entries to its workers (imported only under xdist)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdist.scheduler import LoadScheduling


def _one(nodeid: str) -> int:
    return 1


class SpreadScheduling(LoadScheduling):  # type: ignore[misc]
    """xdist's load scheduling, except that a collection made only of BFCL entries is dealt
    out whole at the start, in collection order, each entry to the worker with the least work
    dealt so far (``weight``: the requests an entry is expected to take; with equal weights,
    every N-th entry).

    xdist otherwise sends small batches, and holds back while a worker's test takes 0.1 s or
    more, which an item waiting for its answer does. A worker generates only what it has been
    sent, so its requests in flight fell short of its share of ``--bfcl-concurrency``, and at
    the end one worker still had a queue while the other was done. Dealt out in turns, each
    share holds the same mix of categories; weighted, a worker dealt a run of long
    conversations gets fewer entries, and the workers finish together. A crashed worker's
    entries go to the worker that replaces it, as with xdist's own scheduling.

    ``contiguous``: each worker is dealt one run of the collection instead (of about the same
    weight), for a model that asks no server (stored results, the oracle): nothing waits on
    a server then, and a worker reads the data of only the categories in its run."""

    def __init__(
        self,
        config: Any,
        log: Any = None,
        prefix: str = "bfcl/",
        weight: Callable[[str], int] = _one,
        contiguous: bool = False,
    ) -> None:
        super().__init__(config, log)
        self.prefix = prefix
        self.weight = weight
        self.contiguous = contiguous

    def schedule(self) -> None:
        collection = self._bfcl_only_collection()
        if collection is None:
            super().schedule()
            return
        nodes = list(self.nodes)
        shares = self._shares(collection, len(nodes))
        self.collection = collection
        if getattr(self, "maxschedchunk", None) is None:  # as xdist's first distribution does
            self.maxschedchunk = len(collection)
        for node, share in zip(nodes, shares, strict=True):
            if share:
                self.node2pending[node].extend(share)
                node.send_runtest_some(share)
        for node in nodes:
            node.shutdown()  # each stops once its share is done

    def _shares(self, collection: list[str], workers: int) -> list[list[int]]:
        """Indices of the collection per worker: each entry in turn to the least loaded (the
        first of them on a tie), so the shares stay even all along, not only in total; or,
        ``contiguous``, one run each."""
        if self.contiguous:
            return self._runs(collection, workers)
        shares: list[list[int]] = [[] for _ in range(workers)]
        loads = [0] * workers
        for index, nodeid in enumerate(collection):
            lightest = loads.index(min(loads))
            shares[lightest].append(index)
            loads[lightest] += self._weight(nodeid)
        return shares

    def _runs(self, collection: list[str], workers: int) -> list[list[int]]:
        """The collection cut into one run per worker, each of about the same weight: an
        entry goes to the run whose share of the total weight its middle falls in."""
        weights = [self._weight(nodeid) for nodeid in collection]
        total = sum(weights)
        shares: list[list[int]] = [[] for _ in range(workers)]
        before = 0
        for index, weight in enumerate(weights):
            middle = before + weight / 2
            shares[min(workers - 1, int(middle * workers / total))].append(index)
            before += weight
        return shares

    def _weight(self, nodeid: str) -> int:
        """An entry's weight, at least 1; a weight that cannot be had counts as 1 (dealing is
        a matter of balance: it must never stop the run)."""
        try:
            return max(1, int(self.weight(nodeid)))
        except Exception:
            return 1

    def _scheduled(self) -> bool:
        """Whether the first distribution happened (later calls bring in new workers)."""
        return getattr(self, "collection", None) is not None

    def _bfcl_only_collection(self) -> list[str] | None:
        """The workers' common collection, if it is made only of BFCL entries."""
        collections = list(self.node2collection.values())
        if not collections or not collections[0] or self._scheduled():
            return None
        first = list(collections[0])
        if any(list(other) != first for other in collections[1:]):
            return None  # xdist's own scheduling reports the difference
        if not all(nodeid.startswith(self.prefix) for nodeid in first):
            return None
        return first
