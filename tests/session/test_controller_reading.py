"""What an xdist controller spends reading its workers' events: no log line formatted for
nobody (pytest_bfcl/session/batching.py, queue_events_unlogged) and no automatic collector
passes over the reports it keeps (pytest_bfcl/perf.py, pause_collector_for_reports)."""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

import pytest
from xdist.remote import Producer
from xdist.workermanage import WorkerController

from pytest_bfcl import perf
from pytest_bfcl.session.batching import queue_events_unlogged


class _NoRepr:
    """A value whose text must never be made (a batch of packed events stands for it)."""

    def __repr__(self) -> str:
        raise AssertionError("formatted")

    __str__ = __repr__


def _node(debug: Any) -> Any:
    queued: list[tuple[str, dict[str, Any]]] = []
    node = SimpleNamespace(log=Producer("workerctl-gw0", enabled=debug), putevent=queued.append)
    node.notify_inproc = WorkerController.notify_inproc.__get__(node)
    return node, queued


@pytest.mark.parametrize("debug", [None, False])  # pytest's --debug unset, or switched off
def test_a_node_that_logs_nothing_queues_its_events_as_xdist_does_without_the_text(debug):
    node, queued = _node(debug)
    theirs, their_queue = _node(debug)
    events = [
        ("runtest_protocol_complete", {"item_index": 3, "duration": 0.5, "bfcl_events": b"x"}),
        ("logstart", {"node": node, "nodeid": "bfcl/a::b", "location": ("a", None, "b")}),
    ]
    queue_events_unlogged(node)
    for name, kwargs in events:
        node.notify_inproc(name, **kwargs)
        theirs.notify_inproc(name, **kwargs)
    assert queued == their_queue == [(name, kwargs) for name, kwargs in events]
    node.notify_inproc("testreport", rep=_NoRepr())  # not turned into text
    with pytest.raises(AssertionError, match="formatted"):  # xdist's own does (what is saved)
        theirs.notify_inproc("testreport", rep=_NoRepr())


def test_a_node_that_logs_keeps_xdist_s_own_queueing():
    node, _ = _node("pytestdebug.log")
    own = node.notify_inproc
    queue_events_unlogged(node)
    assert node.notify_inproc is own
    odd = SimpleNamespace(notify_inproc=own)  # another shape of node: left as it is
    queue_events_unlogged(odd)
    assert odd.notify_inproc is own


@pytest.fixture
def freezing_allowed():
    perf.allow_freezing()
    try:
        yield
    finally:
        perf.forbid_freezing()
        gc.enable()


def test_the_collector_pauses_while_a_controller_reads_and_comes_back(freezing_allowed):
    assert gc.isenabled()
    perf.pause_collector_for_reports()
    assert not gc.isenabled()
    perf.resume_collector()
    assert gc.isenabled()
    perf.pause_collector_for_reports()
    perf.forbid_freezing()  # the session's end resumes it too
    assert gc.isenabled()


def test_the_pause_neither_applies_where_freezing_is_not_allowed_nor_undoes_another_s():
    perf.forbid_freezing()
    perf.pause_collector_for_reports()  # a session inside another program
    assert gc.isenabled()
    perf.allow_freezing()
    try:
        gc.disable()  # someone else's pause
        perf.pause_collector_for_reports()
        perf.resume_collector()
        assert not gc.isenabled()  # theirs to undo
    finally:
        gc.enable()
        perf.forbid_freezing()


def test_an_xdist_controller_reads_without_the_collector_and_ends_with_it(
    pytester, data_source, tmp_path
):
    seen = tmp_path / "seen.txt"
    pytester.makeconftest(
        f"""
import gc

CONTROLLER = []

def pytest_configure(config):
    CONTROLLER.append(not hasattr(config, "workerinput"))  # xdist's worker, or not

def pytest_runtest_logreport(report):
    if CONTROLLER[0]:
        with open({str(seen)!r}, "a") as out:
            out.write(f"report {{gc.isenabled()}}\\n")

def pytest_unconfigure(config):
    if CONTROLLER[0]:
        with open({str(seen)!r}, "a") as out:
            out.write(f"end {{gc.isenabled()}}\\n")
"""
    )
    result = pytester.runpytest_subprocess(
        f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
        "--bfcl-category=simple_python", "-p", "no:cacheprovider", "-n", "2",
        "-k", "simple_python_1",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    lines = seen.read_text().splitlines()
    assert len(lines) > 30 and set(lines[:-1]) == {"report False"}
    assert lines[-1] == "end True"
