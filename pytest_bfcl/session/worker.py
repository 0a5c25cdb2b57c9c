"""The session plugin of an xdist worker: it generates the entries dealt to it, ahead of their
items, and hands its replica figures back to the controller; the controller does everything
else (scores, gate, reports, progress)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_bfcl.backends.embedding import share_cpus
from pytest_bfcl.gate import Baseline
from pytest_bfcl.perf import collect_and_freeze
from pytest_bfcl.pytest_private import retire_worker_terminal
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.run.scheduler import job_key
from pytest_bfcl.session.batching import EventBatch, batch_worker_events, only_pytest_implements
from pytest_bfcl.session.common import SessionPlugin
from pytest_bfcl.session.handoff import REPLICAS_OUTPUT, WorkerHandoff, take_model_state
from pytest_bfcl.session.items import NODE_PREFIX, BfclItem
from pytest_bfcl.session.transport import compact_report, pack_report


class WorkerPlugin(SessionPlugin):
    def __init__(self, config: pytest.Config, run: BfclRun, baseline: Baseline | None) -> None:
        super().__init__(config, run, baseline)
        self.queue_watch = XdistQueueWatch()
        self.workers = int(config.workerinput.get("workercount", 1))  # type: ignore[attr-defined]
        share_cpus(self.workers)  # the embedding model's threads: a share of the CPUs each
        take_model_state(config, run.model)  # what the controller's checks read
        handoff = WorkerHandoff.received(config)
        self.batch: EventBatch | None = None
        if handoff is not None and handoff.batched:
            self.batch = batch_worker_events(config, f"{NODE_PREFIX}/")
        self._compact: bool | None = None  # whether reports travel compact, decided once

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Nothing a worker's terminal writes is read (xdist sends its output to /dev/null;
        the controller's terminal reports every entry): the worker runs without one."""
        retire_worker_terminal(self.config)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> None:
        """Start generating the items queued for this worker, so that requests stay in flight
        between items; the workers share ``--bfcl-concurrency``."""
        if not isinstance(item, BfclItem) or not self.run.scheduler.prefetches:
            return  # a local model generates on the spot: nothing to start, nothing to wait on
        queued = self.queue_watch.new_items(self.config, item.session)
        ids = [i.entry_id for i in [item, *queued] if isinstance(i, BfclItem)]
        self.run.prefetch(ids, concurrency=max(1, self.settings.concurrency // self.workers))
        if self.batch is not None and not generation_ready(self.run, item.entry_id):
            self.batch.flush()  # the items finished so far reach the controller while it waits

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_to_serializable(self, report: Any) -> dict[str, Any] | None:
        """A BFCL item's report goes to the controller packed (:mod:`.transport`), or, where
        its events travel batched (packed all at once), as its values, unless another plugin
        serialises reports: pytest's own serialisation then."""
        if self.batch is None:
            return pack_report(report, f"{NODE_PREFIX}/")
        if self._compact is None:
            self._compact = only_pytest_implements(self.config.hook.pytest_report_to_serializable)
        return compact_report(report, f"{NODE_PREFIX}/") if self._compact else None

    @pytest.hookimpl(trylast=True)  # after xdist has sent the report to the controller
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """The entry's HTML record has gone to the controller with its report; pytest keeps
        the report here to the end, so the record leaves it."""
        report.__dict__.pop("bfcl_record", None)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """xdist hands a worker's output to the controller (``pytest_testnodedown``)."""
        workeroutput = self.config.workeroutput  # type: ignore[attr-defined]
        workeroutput[REPLICAS_OUTPUT] = json.dumps(self.run.model.replica_stats())
        collect_and_freeze()


def generation_ready(run: BfclRun, entry_id: str) -> bool:
    """Whether the entry's item would find its generations (every sample's) done."""
    samples = range(run.settings.samples)
    return all(run.scheduler.ready(job_key(entry_id, k)) for k in samples)


class XdistQueueWatch:
    """What an xdist worker has queued, read from its worker loop, and only when the queue
    grew or was replaced since the last look: reading the whole queue before every item
    costs time quadratic in the items. Empty if the loop changes shape in another xdist
    version, in which case items generate one at a time."""

    def __init__(self) -> None:
        self._queue_id = 0
        self._length = 0
        self._loop: Any = None  # the worker loop holding the queue, found at the first look
        self._looked = False

    def new_items(self, config: pytest.Config, session: pytest.Session) -> list[pytest.Item]:
        if not self._looked:  # once: looking through every plugin before each item adds up
            self._loop = next(
                (p for p in config.pluginmanager.get_plugins() if _holds_queue(p)), None
            )
            self._looked = True
        if self._loop is None:
            return []
        try:
            return self._read(self._loop, self._loop.torun, session)
        except Exception:  # an internal of another plugin: never fatal
            return []

    def _read(self, plugin: Any, queue: Any, session: pytest.Session) -> list[pytest.Item]:
        with queue.lock() as pending:
            # Each item takes one index off the queue; a longer queue than that leaves, or
            # another queue object (work stealing replaces it), means new indices arrived.
            unchanged = id(pending) == self._queue_id and len(pending) <= self._length - 1
            self._queue_id, self._length = id(pending), len(pending)
            if unchanged:
                return []
            indices = [i for i in pending if isinstance(i, int)]
        nxt = getattr(plugin, "nextitem_index", None)
        if isinstance(nxt, int):
            indices.insert(0, nxt)
        return [session.items[i] for i in indices if 0 <= i < len(session.items)]


def _holds_queue(plugin: Any) -> bool:
    """Whether a plugin is xdist's worker loop with its queue of dealt items."""
    return hasattr(getattr(plugin, "torun", None), "lock")
