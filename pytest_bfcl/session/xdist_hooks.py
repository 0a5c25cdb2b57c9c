"""The xdist side of the controller's session plugin: how it deals entries out to the
workers, what it hands them, and what it takes back from them (imported by the controller;
each hook is optional, absent without xdist)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.run.run_metadata import model_temperature
from pytest_bfcl.run.scheduler import ReportedProgress
from pytest_bfcl.session.batching import queue_events_unlogged
from pytest_bfcl.session.handoff import REPLICAS_OUTPUT
from pytest_bfcl.session.items import NODE_PREFIX
from pytest_bfcl.session.transport import unpack_report


class XdistControllerHooks:
    """Mixed into the controller's plugin, whose state these hooks read and feed."""

    run: BfclRun
    reported: ReportedProgress | None
    total_items: int
    worker_replicas: list[list[dict[str, Any]]]
    # Per category, the ids the workers collect: the controller's selection once its preflight
    # has read and checked the data (empty before: with --collect-only they read it themselves).
    worker_collection: dict[str, list[str]] = {}

    def _compare_on(self, selected: set[str]) -> None:
        raise NotImplementedError

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_from_serializable(self, data: dict[str, Any]) -> pytest.TestReport | None:
        """A BFCL item's report from an xdist worker, packed (:mod:`.transport`)."""
        return unpack_report(data)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Each worker's events reach the controller's loop without a log line nobody reads."""
        queue_events_unlogged(node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller learns how many entries the workers run (each collects them all)."""
        if self.reported is None:
            self.reported = ReportedProgress()
            entries = {i.rpartition("::")[2] for i in ids if i.startswith(f"{NODE_PREFIX}/")}
            self.total_items = len(entries)
            self._compare_on(entries)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """With xdist's default distribution, deal BFCL entries out whole at the start (see
        :class:`pytest_bfcl.xdist_schedule.SpreadScheduling`); any other ``--dist``, or a
        ``--maxschedchunk``, is the user's choice. A model that asks no server (stored
        results, the oracle) is scored in one run of categories per worker: each worker reads
        only the data of the categories it scores."""
        if getattr(config.option, "dist", None) != "load" or config.getoption("maxschedchunk"):
            return None  # another mode, or batches the user sized: xdist's own scheduling
        from pytest_bfcl.xdist_schedule import SpreadScheduling

        asks_nothing = model_temperature(self.run) is None
        selection = self.run.selection

        def weight(nodeid: str) -> int:
            entry_id = nodeid.rpartition("::")[2]
            if asks_nothing:  # what the worker spends is scoring
                return selection.scoring_cost(entry_id)
            return self.run.expected_requests(entry_id)

        return SpreadScheduling(
            config, log, prefix=f"{NODE_PREFIX}/", weight=weight, contiguous=asks_nothing
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: keep its replica figures for the usage report."""
        output = getattr(node, "workeroutput", None) or {}
        if output.get(REPLICAS_OUTPUT):
            self.worker_replicas.append(json.loads(output[REPLICAS_OUTPUT]))
