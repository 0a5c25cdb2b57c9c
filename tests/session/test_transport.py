"""BFCL items' reports travel from xdist workers packed or as their values
(pytest_bfcl/session/transport.py): the controller rebuilds the same reports, and the junit file
of a -n 2 run holds what -n 0's does."""

from __future__ import annotations

import marshal
import os
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_bfcl.pytest_private import node_id_of
from pytest_bfcl.session.transport import (
    CompactReader,
    compact_report,
    is_compact,
    pack_report,
    report_from_compact,
    unpack_report,
)


def _report(**extra) -> pytest.TestReport:
    return pytest.TestReport(
        nodeid="bfcl/simple_python::simple_python_3",
        location=("bfcl/simple_python", None, "simple_python_3"),
        keywords={"simple_python_3": 1, "bfcl": 1},
        outcome="failed",
        longrepr="simple_python_3 failed: wrong value é\ud800",
        when="call",
        sections=[("Captured stdout call", "hello")],
        duration=0.25,
        start=1.0,
        stop=1.25,
        user_properties=[("bfcl_valid", "false"), ("bfcl_reason", "x")],
        **extra,
    )


def test_a_packed_report_comes_back_whole():
    report = _report(bfcl_record=b"\x00packed facts")
    data = pack_report(report, "bfcl/")
    assert data is not None and set(data) == {"$report_type", "bfcl_packed"}
    data.update(item_index=7, worker_id="gw1")  # what xdist adds on the way
    back = unpack_report(data)
    assert isinstance(back, pytest.TestReport)
    # what pytest's own hooks rebuild from the dict xdist would have sent
    usual = {**report._to_json(), "$report_type": "TestReport", "item_index": 7, "worker_id": "gw1"}
    assert back._to_json() == pytest.TestReport._from_json(usual)._to_json()
    assert back.bfcl_record == b"\x00packed facts"


def test_other_reports_travel_the_usual_way():
    assert pack_report(_report(), "other/") is None  # not a BFCL item
    odd = _report()
    odd.user_properties.append(("owner", object()))  # a value marshal refuses
    assert pack_report(odd, "bfcl/") is None
    assert unpack_report({"$report_type": "TestReport", "nodeid": "x"}) is None


def _as_pytest_rebuilds(report: pytest.TestReport, **added) -> pytest.TestReport:
    """What the controller's pytest rebuilds from the dict xdist sends for ``report``."""
    return pytest.TestReport._from_json(
        {**report._to_json(), "$report_type": "TestReport", **added}
    )


@pytest.mark.parametrize(
    "report",
    [
        _report(bfcl_record=b"\x00packed facts"),
        pytest.TestReport("bfcl/x::a", ("bfcl/x", None, "a"), {"a": 1}, "passed", None, "setup"),
        _report(wasxfail="known upstream", bfcl_answer={"calls": [["f", {"a": 1.5}]]}),
    ],
    ids=["failed call", "passed setup", "xfailed with extras"],
)
def test_a_compact_report_is_rebuilt_as_pytest_rebuilds_it(report):
    data = compact_report(report, "bfcl/")
    assert data is not None and set(data) == {"$report_type", "bfcl_compact"}
    added = {"item_index": 7, "worker_id": "gw1", "testrun_uid": "abc"}  # xdist's, on the way
    data = marshal.loads(marshal.dumps({**data, **added}, 4))  # as the batch carries it
    back = report_from_compact(data)
    expected = _as_pytest_rebuilds(report, **added)
    # every attribute, its value and type, in the same order (a re-serialisation's key order)
    assert list(vars(back).items()) == list(vars(expected).items())
    assert [type(v) for v in vars(back).values()] == [type(v) for v in vars(expected).values()]
    assert back._to_json() == expected._to_json()
    through_hook = unpack_report(data)
    assert through_hook is not None and through_hook._to_json() == expected._to_json()


def test_a_reader_rebuilds_an_items_reports_as_pytest_does_sharing_their_node_id():
    """An item's reports arrive one after the other: each after the first takes the node id
    pytest made of the first one's; another item's report gets its own."""
    added = {"item_index": 7, "worker_id": "gw1", "testrun_uid": "abc"}
    call = _report(bfcl_answer="calls")
    item = [
        pytest.TestReport(call.nodeid, call.location, call.keywords, "passed", None, "setup"),
        call,
        pytest.TestReport(call.nodeid, call.location, call.keywords, "passed", None, "teardown"),
        pytest.TestReport("bfcl/x::b", ("bfcl/x", None, "b"), {"b": 1}, "passed", None, "setup"),
    ]
    read = CompactReader()
    back = []
    for report in item:
        data = compact_report(report, "bfcl/")
        assert data is not None
        back.append(read(marshal.loads(marshal.dumps({**data, **added}, 4))))
    for report, rebuilt in zip(item, back, strict=True):
        expected = _as_pytest_rebuilds(report, **added)
        assert list(vars(rebuilt).items()) == list(vars(expected).items())
        assert rebuilt.nodeid == report.nodeid
    ids = [node_id_of(r) for r in back]
    assert ids[0] is ids[1] is ids[2]  # one item: pytest's node id made once
    assert ids[3] is not ids[0] and ids[3] == node_id_of(_as_pytest_rebuilds(item[3]))


class _Path(os.PathLike):
    def __fspath__(self) -> str:
        return "/some/where"


def test_reports_pytest_must_serialise_are_not_made_compact():
    assert compact_report(_report(), "other/") is None  # not a BFCL item
    error = _report()
    error.longrepr = ("bfcl/x", 3, "skipped: why")  # not text
    assert compact_report(error, "bfcl/") is None
    assert compact_report(_report(artefact=_Path()), "bfcl/") is None  # pytest writes its text
    assert compact_report(_report(result=object()), "bfcl/") is None  # pytest writes None
    assert is_compact(compact_report(_report(), "bfcl/") or {})


def test_a_worker_sends_compact_reports_only_where_pytest_alone_serialises(pytester):
    from pytest_bfcl.names import PLUGIN_NAME
    from pytest_bfcl.session.batching import only_pytest_implements

    config = pytester.parseconfigure("-p", "no:cacheprovider")

    class Ours:
        def pytest_report_to_serializable(self, config, report):
            return None

    config.pluginmanager.register(Ours(), PLUGIN_NAME)
    assert only_pytest_implements(config.hook.pytest_report_to_serializable)

    class AddsItsOwn:  # a plugin that adds its data to what travels
        def pytest_report_to_serializable(self, config, report):
            return None

    config.pluginmanager.register(AddsItsOwn(), "adds-its-own")
    assert not only_pytest_implements(config.hook.pytest_report_to_serializable)


def _testcases(path) -> list[tuple[str, str, str]]:
    """(name, properties, child elements) of each testcase, in name order."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = ";".join(f"{p.get('name')}={p.get('value')}" for p in case.iter("property"))
        children = ";".join(
            f"{c.tag}:{c.get('message')}:{re.sub(r'0x[0-9a-f]+', '0x', c.text or '')}"
            for c in case
            if c.tag != "properties"
        )
        cases.append((case.get("name") or "", props, children))
    return sorted(cases)


def test_an_xdist_run_writes_the_junit_file_one_process_writes(pytester, data_source, tmp_path):
    files = []
    for workers in ("0", "2"):
        junit = tmp_path / f"junit-{workers}.xml"
        result = pytester.runpytest_subprocess(
            f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle:fail=0.3,seed=4",
            "--bfcl-category=simple_python,multi_turn_base", "-p", "no:cacheprovider",
            "-n", workers, f"--junitxml={junit}", "-k", "simple_python_1 or multi_turn_base_1",
        )  # fmt: skip
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-2000:]
        files.append(junit)
    one, two = (_testcases(path) for path in files)
    assert len(one) > 100 and any("failure" in children for _, _, children in one)
    # latencies are measured per run: compare everything else
    strip = re.compile(r"bfcl_latency=[^;]*;?")
    assert [(n, strip.sub("", p), c) for n, p, c in one] == [
        (n, strip.sub("", p), c) for n, p, c in two
    ]
