"""How an xdist controller hands BFCL entries to its workers (imported only under xdist)."""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScheduling


class SpreadScheduling(LoadScheduling):  # type: ignore[misc]
    """xdist's load scheduling, except that a collection made only of BFCL entries is dealt
    out whole at the start, each worker taking every N-th entry.

    xdist otherwise sends small batches, and holds back while a worker's test takes 0.1 s or
    more, which an item waiting for its answer does. A worker generates only what it has been
    sent, so its requests in flight fell short of its share of ``--bfcl-concurrency``, and at
    the end one worker still had a queue while the other was done. Dealt out in turns, each
    share holds the same mix of categories and the workers finish together. A crashed worker's
    entries go to the worker that replaces it, as with xdist's own scheduling."""

    def __init__(self, config: Any, log: Any = None, prefix: str = "bfcl/") -> None:
        super().__init__(config, log)
        self.prefix = prefix

    def schedule(self) -> None:
        collection = self._bfcl_only_collection()
        if collection is None:
            super().schedule()
            return
        self.collection = collection
        if getattr(self, "maxschedchunk", None) is None:  # as xdist's first distribution does
            self.maxschedchunk = len(collection)
        nodes = list(self.nodes)
        for position, node in enumerate(nodes):
            share = list(range(position, len(collection), len(nodes)))
            if share:
                self.node2pending[node].extend(share)
                node.send_runtest_some(share)
        for node in nodes:
            node.shutdown()  # each stops once its share is done

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
