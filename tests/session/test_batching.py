"""BFCL items' xdist events travel in few messages (pytest_bfcl/session/batching.py): the
controller replays them in their order through xdist's handlers; anything else travels as
xdist sends it."""

from __future__ import annotations

import marshal
from types import SimpleNamespace
from typing import Any
from xml.etree import ElementTree

import pytest

from pytest_bfcl.session.batching import BATCHED, EventBatch, receive_batched_events
from pytest_bfcl.session.transport import pack_report

NODEID = "bfcl/simple_python::simple_python_3"
LOCATION = ("bfcl/simple_python", None, "simple_python_3")


def _report(when: str, index: int = 3) -> dict[str, Any]:
    report = pytest.TestReport(NODEID, LOCATION, {}, "passed", None, when, [], 0.1)
    data = pack_report(report, "bfcl/")
    assert data is not None
    return {**data, "item_index": index, "worker_id": "gw0"}


def _item_events(nodeid: str = NODEID, index: int = 3) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("logstart", {"nodeid": nodeid, "location": LOCATION}),
        *(("testreport", {"data": _report(when, index)}) for when in ("setup", "call", "teardown")),
        ("logfinish", {"nodeid": nodeid, "location": LOCATION}),
        ("runtest_protocol_complete", {"item_index": index, "duration": 0.5}),
    ]


def _sent_through(
    batch_prefix: str, events: list[tuple[str, dict[str, Any]]], **options: Any
) -> list[Any]:
    """What the batch sends of these events, with what it still holds sent at the end."""
    sent: list[tuple[str, dict[str, Any]]] = []
    batch = EventBatch(lambda name, **kwargs: sent.append((name, kwargs)), batch_prefix, **options)
    for name, kwargs in events:
        batch(name, **kwargs)
    batch.flush()
    return sent


def test_a_bfcl_item_s_events_go_as_one_message():
    sent = _sent_through("bfcl/", _item_events())
    assert [name for name, _ in sent] == ["runtest_protocol_complete"]
    assert sent[0][1]["item_index"] == 3 and isinstance(sent[0][1][BATCHED], bytes)


def test_several_items_go_as_one_message_up_to_the_limit():
    events = [e for index in range(5) for e in _item_events(index=index)]
    sent = _sent_through("bfcl/", events, items_per_message=2)
    # two, two, and the last one when the batch is flushed (the worker's end)
    assert [kwargs["item_index"] for _, kwargs in sent] == [1, 3, 4]
    assert all(name == "runtest_protocol_complete" for name, _ in sent)


def test_nothing_is_held_when_the_worker_would_wait_for_more_work():
    sent: list[Any] = []
    batch = EventBatch(lambda name, **kw: sent.append(name), "bfcl/", idle_next=lambda: True)
    for name, kwargs in _item_events():
        batch(name, **kwargs)
    assert sent == ["runtest_protocol_complete"]  # sent without a flush


def test_finished_items_are_held_a_bounded_time():
    sent: list[Any] = []
    batch = EventBatch(lambda name, **kw: sent.append(kw["item_index"]), "bfcl/", held_s=0.0)
    for name, kwargs in _item_events(index=7):
        batch(name, **kwargs)
    assert sent == [7]
    sent.clear()
    held = EventBatch(lambda name, **kw: sent.append(kw["item_index"]), "bfcl/", held_s=60.0)
    for name, kwargs in _item_events(index=8):
        held(name, **kwargs)
    assert sent == []  # held until the next flush
    held.flush()
    assert sent == [8]


def test_other_items_and_events_travel_as_xdist_sends_them():
    other = _item_events("tests/test_x.py::test_y")
    assert _sent_through("bfcl/", other) == other
    # an event of another kind in the middle: what was kept goes first, and the rest of the
    # item's events one by one, in their order
    events = _item_events()
    warning = ("warning_recorded", {"nodeid": NODEID, "when": "runtest"})
    mixed = [*events[:2], warning, *events[2:]]
    sent = _sent_through("bfcl/", mixed)
    assert sent[:3] == mixed[:3]
    assert _unbatched(sent) == mixed


def _unbatched(sent: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The events as the controller replays them (a batch's events before its message)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name, kwargs in sent:
        kwargs = dict(kwargs)
        packed = kwargs.pop(BATCHED, None)
        out += marshal.loads(packed) if packed is not None else []
        out.append((name, kwargs))
    return out


def test_events_marshal_refuses_travel_one_by_one():
    events = _item_events()
    events[1] = ("testreport", {"data": {"odd": object()}})
    assert _sent_through("bfcl/", events) == events


class _DSession:
    """xdist's controller loop, as far as the replay uses it: its handlers, recording calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def worker_logstart(self, node: Any, nodeid: str, location: Any) -> None:
        self.calls.append(("logstart", nodeid))

    def worker_logfinish(self, node: Any, nodeid: str, location: Any) -> None:
        self.calls.append(("logfinish", nodeid))

    def worker_testreport(self, node: Any, rep: Any) -> None:
        self.calls.append(("testreport", (rep.when, rep.item_index, rep.worker_id)))

    def worker_runtest_protocol_complete(self, node: Any, item_index: int, duration: float) -> None:
        self.calls.append(("complete", item_index))


def test_the_controller_replays_them_in_order_before_the_item_completes():
    dsession = _DSession()
    from pytest_bfcl.session.transport import unpack_report

    hook = SimpleNamespace(pytest_report_from_serializable=lambda config, data: unpack_report(data))
    config = SimpleNamespace(
        pluginmanager=SimpleNamespace(get_plugin=lambda name: dsession), hook=hook
    )
    assert receive_batched_events(config)  # type: ignore[arg-type]
    ((name, kwargs),) = _sent_through("bfcl/", _item_events(index=2) + _item_events(index=3))
    getattr(dsession, f"worker_{name}")(node="gw0", **kwargs)
    assert dsession.calls == [
        (step, detail)
        for index in (2, 3)
        for step, detail in (
            ("logstart", NODEID),
            ("testreport", ("setup", index, "gw0")),
            ("testreport", ("call", index, "gw0")),
            ("testreport", ("teardown", index, "gw0")),
            ("logfinish", NODEID),
            ("complete", index),
        )
    ]
    # a completion without events (another item's) is xdist's as before
    dsession.worker_runtest_protocol_complete(node="gw0", item_index=4, duration=0.1)
    assert dsession.calls[-1] == ("complete", 4)


def test_reports_are_read_directly_unless_another_plugin_reads_them(pytester):
    from pytest_bfcl.names import PLUGIN_NAME
    from pytest_bfcl.session.batching import _report_reader
    from pytest_bfcl.session.transport import unpack_report

    class Unpacker:  # the controller's session plugin reads the packed reports
        def pytest_report_from_serializable(self, config, data):
            return unpack_report(data)

    config = pytester.parseconfigure("-p", "no:cacheprovider")
    config.pluginmanager.register(Unpacker(), PLUGIN_NAME)
    read = _report_reader(config)
    assert read.__name__ == "direct"  # pytest's reader alone: called without the hook
    failed = pytest.TestReport(NODEID, LOCATION, {}, "failed", "why", "call", [], 0.1)
    data = config.hook.pytest_report_to_serializable(config=config, report=failed)
    report = read(data)
    assert (report.nodeid, report.when, report.outcome, report.longrepr) == (
        NODEID,
        "call",
        "failed",
        "why",
    )
    assert read(_report("setup")).when == "setup"  # a packed report: through the hook

    class OtherReader:
        def pytest_report_from_serializable(self, config, data):
            return None

    config.pluginmanager.register(OtherReader(), "other-reader")
    assert _report_reader(config).__name__ == "by_hook"


def test_a_controller_of_another_shape_does_not_ask_for_them():
    config = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: object()))
    assert not receive_batched_events(config)  # type: ignore[arg-type]


CRASHING_CONFTEST = """
import os
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if item.name == "simple_python_30" and os.environ.get("PYTEST_XDIST_WORKER"):
        os._exit(3)  # the worker dies as a killed or out-of-memory process does
"""


@pytest.mark.e2e
def test_a_dead_worker_s_entry_says_it_may_have_died_on_a_later_one(pytester, monkeypatch):
    pytester.makeconftest(CRASHING_CONFTEST)
    result = pytester.runpytest_subprocess(
        "-n", "2", "--bfcl-model=oracle", "--bfcl-category=simple_python", "-p",
        "no:cacheprovider", "--max-worker-restart=1", "--junitxml=junit.xml",
    )  # fmt: skip
    out = result.stdout.str()
    assert result.ret != 0, out[-3000:]  # a run that lost its workers never passes
    assert "200 of 400 not scored" in out, out[-3000:]  # and says what it did not score
    tree = ElementTree.parse(pytester.path / "junit.xml")
    crashes = [
        element.get("message", "")
        for element in tree.iter()
        if element.tag in ("error", "failure") and "crashed while" in element.get("message", "")
    ]
    assert crashes, out[-3000:]
    for message in crashes:  # the worker may have died on an entry after the one named
        assert "or on an entry after it" in message, message
