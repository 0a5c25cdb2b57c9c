"""BFCL items are ordinary pytest items: fixtures (autouse, usefixtures, the ini's
usefixtures) run for them, record_property reaches junit, and -k, -m, --deselect and --lf
select them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

CONFTEST = """
import json, os
import pytest

CALLS = {"session": 0, "module": 0, "function": 0, "used": []}

@pytest.fixture(scope="session", autouse=True)
def _revision(record_testsuite_property):
    CALLS["session"] += 1
    record_testsuite_property("model_revision", "abc123")

@pytest.fixture(scope="module", autouse=True)
def _per_category():
    CALLS["module"] += 1

@pytest.fixture(autouse=True)
def _each(record_property, request):
    CALLS["function"] += 1
    record_property("checkpoint", "step-4000")
    yield
    CALLS.setdefault("torn_down", 0)
    CALLS["torn_down"] += 1

@pytest.fixture
def gpu_free(request):
    CALLS["used"].append(request.node.name)
    if os.environ.get("BFCL_TEST_NO_GPU"):
        pytest.skip("no GPU free")

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name.split("-")[0].endswith("_3"):  # simple_javascript_3, live_relevance_3-3-0
            item.add_marker(pytest.mark.usefixtures("gpu_free"))

def pytest_sessionfinish(session):
    with open("calls.json", "w") as fh:
        json.dump(CALLS, fh)
"""


@pytest.fixture
def common(data_source) -> list[str]:
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider", "-p", "no:randomly",
            "--bfcl-model=oracle", "--bfcl-category=simple_javascript,live_relevance"]  # fmt: skip


def test_fixtures_run_for_bfcl_items_and_their_properties_reach_junit(pytester, common):
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest(*common, "--junitxml=junit.xml", "-o", "junit_family=xunit1")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    calls = json.loads((pytester.path / "calls.json").read_text())
    # 50 + 16 entries; module scope is one category; usefixtures marks added at collection
    assert calls["session"] == 1 and calls["module"] == 2
    assert calls["function"] == 66 and calls["torn_down"] == 66
    assert sorted(calls["used"]) == ["live_relevance_3-3-0", "simple_javascript_3"]
    root = ET.parse(pytester.path / "junit.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    suite_props = {p.get("name"): p.get("value") for p in suite.iter("property")
                   if p.get("name") == "model_revision"}  # fmt: skip
    assert suite_props == {"model_revision": "abc123"}
    entries = [
        {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in suite.iter("testcase")
        if case.get("name", "").startswith("simple_javascript_")
    ]
    assert len(entries) == 50
    assert all(props["checkpoint"] == "step-4000" and "bfcl_id" in props for props in entries)


def test_a_fixture_that_skips_an_entry_counts_it_as_skipped(pytester, common, monkeypatch):
    pytester.makeconftest(CONFTEST)
    monkeypatch.setenv("BFCL_TEST_NO_GPU", "1")
    result = pytester.runpytest(*common, "-rs")
    outcomes = result.parseoutcomes()
    assert outcomes["skipped"] == 2 and "error" not in outcomes and "errors" not in outcomes
    out = result.stdout.str()
    assert "simple_javascript: 1 of 50 not scored (1 skipped: no GPU free)" in out


def test_the_ini_usefixtures_applies_to_bfcl_items(pytester, common):
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nusefixtures = gpu_free\n")
    result = pytester.runpytest(*common)
    assert result.ret == pytest.ExitCode.OK
    calls = json.loads((pytester.path / "calls.json").read_text())
    assert len(calls["used"]) == 66


def test_selection_flags_select_bfcl_items(pytester, common):
    by_k = pytester.runpytest(*common, "-k", "simple_javascript_42 or live_relevance_1-")
    assert by_k.parseoutcomes()["passed"] == 2
    by_m = pytester.runpytest(*common, "-m", "bfcl_live_relevance")
    assert by_m.parseoutcomes()["passed"] == 16
    deselected = pytester.runpytest(*common, "--deselect", "bfcl/live_relevance")
    assert deselected.parseoutcomes()["passed"] == 50


def test_last_failed_reruns_the_failing_entries(pytester, data_source, tmp_path):
    flags = [f"--bfcl-data={data_source.data_dir}", "-p", "no:randomly",
             "--bfcl-model=oracle:fail=0.1,seed=3", "--bfcl-category=simple_javascript"]  # fmt: skip
    first = pytester.runpytest(*flags)
    failed = first.parseoutcomes()["failed"]
    assert failed > 0
    again = pytester.runpytest(*flags, "--lf")
    outcomes = again.parseoutcomes()
    assert outcomes["failed"] == failed and "passed" not in outcomes
