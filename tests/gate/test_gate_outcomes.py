"""junit, pytest's summary and the exit status tell the gate's story: an entry worse than the
baseline is pending the gate while the run lasts; a passing gate leaves no BFCL testcase
failed, a failing gate fails exactly the entries behind its failing comparisons (and their
summary testcases); a selection narrowed on the command line is compared as selected, and what
was selected but not scored is still incomplete. The gate scenario: tests/gate_scenario.py."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gate_scenario import ids, write_results

from pytest_bfcl.report.html.page import read_data_element
from pytest_bfcl.report.junit.summary import settle_pending_testcases
from pytest_bfcl.report.pending import PENDING, Settlement


def _junit(path: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """The suite's counts, and per testcase name its outcome and message."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    outcomes, messages = {}, {}
    for case in suite.iter("testcase"):
        name = case.get("name", "")
        child = next((c for c in case if c.tag in ("failure", "skipped", "error")), None)
        outcomes[name] = "passed" if child is None else child.tag
        messages[name] = "" if child is None else child.get("message", "")
    return dict(suite.attrib), outcomes, messages


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_passing_gate_leaves_no_entry_failed(gate_env, tmp_path, workers):
    if workers != "0":
        pytest.importorskip("xdist")
    run, _ = gate_env
    junit = tmp_path / "junit.xml"
    result = run(ids(range(20)) | ids([200, 201]), "-n", workers, f"--junitxml={junit}")
    result.assert_outcomes(passed=378, xfailed=22)
    assert result.ret == 0
    out = result.stdout.str()
    assert "FAILED bfcl" not in out
    assert "WORSE (within the noise) simple_python_200 [simple_python]" in out
    counts, outcomes, messages = _junit(junit)
    assert counts["failures"] == "0" and counts["skipped"] == "22"
    assert outcomes["simple_python_200"] == "skipped"
    assert messages["simple_python_200"].startswith(
        "worse than the baseline within the noise (simple_python: p=0.25)"
    )
    assert PENDING not in junit.read_text()  # every pending entry settled


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_failing_gate_fails_the_entries_behind_it_and_its_summary(gate_env, tmp_path, workers):
    if workers != "0":
        pytest.importorskip("xdist")
    run, _ = gate_env
    junit, html = tmp_path / "junit.xml", tmp_path / "report.html"
    regressed = ids(range(100, 140))
    result = run(
        ids(range(20)) | regressed, "-n", workers, f"--junitxml={junit}", f"--bfcl-html={html}"
    )
    result.assert_outcomes(passed=340, failed=40, xfailed=20)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert out.count("FAILED bfcl/simple_python::") == 40
    counts, outcomes, messages = _junit(junit)
    failed = {name for name, outcome in outcomes.items() if outcome == "failure"}
    assert failed == regressed | {"simple_python"}  # the entries and the summary testcase
    assert counts["failures"] == "41" and counts["skipped"] == "20"
    assert messages["simple_python_100"].startswith(
        "REGRESSION (passed in the baseline; the gate failed on simple_python, p="
    )
    # the HTML report's page marks the same entries failed (its records predate the gate)
    assert set(read_data_element(html.read_text())["gate_failed"]) == regressed


def test_the_gate_off_or_any_settles_pending_entries_its_way(gate_env, tmp_path):
    run, _ = gate_env
    off = run(ids(range(20)) | ids(range(100, 140)), "--bfcl-gate=off", name="off")
    off.assert_outcomes(passed=340, xfailed=60)
    assert off.ret == 0
    single = run(ids(range(20)) | ids([300]), "--bfcl-gate=any", name="any")
    single.assert_outcomes(passed=379, failed=1, xfailed=20)
    assert single.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize(
    "narrowing",
    [
        ["-k", "simple_python_1 and not simple_python_15"],
        ["--deselect", "bfcl/simple_python::simple_python_7"],
        ["-m", "not bfcl_simple_python"],  # the one category's marker: no entry at all
        ["bfcl/simple_python::simple_python_3", "bfcl/simple_python::simple_python_4"],
    ],
    ids=["k", "deselect", "m", "node-path"],
)
def test_a_narrowed_selection_is_compared_as_selected(gate_env, workers, narrowing):
    if workers != "0":
        pytest.importorskip("xdist")
    run, _ = gate_env
    result = run(ids(range(20)), "-n", workers, *narrowing)
    out = result.stdout.str()
    if narrowing[0] == "-m":
        assert "no BFCL entry ran" in out and "BFCL gate: FAILED" not in out
        assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
        return
    assert result.ret == 0, out[-3000:]
    assert "incomplete" not in out
    assert "narrowed on the command line" in out and "entries selected of 400" in out


def test_entries_selected_but_not_scored_stay_incomplete(gate_env, pytester):
    pytester.makeconftest(
        "import pytest\n"
        "@pytest.fixture(autouse=True)\n"
        "def _skip(request):\n"
        "    if request.node.name == 'simple_python_3':\n"
        "        pytest.skip('no GPU free')\n"
    )
    run, _ = gate_env
    node = "bfcl/simple_python::simple_python_"
    result = run(ids(range(20)), f"{node}3", f"{node}4")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "narrowed on the command line" in out
    assert "simple_python: 1 of 2 not scored (1 skipped: no GPU free)" in out


def test_last_failed_compares_the_entries_that_failed(
    gate_env, pytester, dataset, data_source, tmp_path
):
    """--lf after a run whose gate failed: the failed entries alone, compared as selected."""
    _, baseline = gate_env
    results = write_results(tmp_path / "lf", dataset, ids(range(20)) | ids(range(100, 140)))
    args = [
        f"--bfcl-model=replay:{results}",
        f"--bfcl-baseline={baseline}",
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-category=simple_python",
    ]
    first = pytester.runpytest(*args)
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    again = pytester.runpytest(*args, "--lf")
    out = again.stdout.str()
    assert "narrowed on the command line" in out and "incomplete" not in out
    again.assert_outcomes(failed=40, deselected=360)
    assert again.ret == pytest.ExitCode.TESTS_FAILED


# -- the junit text, settled -------------------------------------------------------------------


def test_settling_rewrites_only_pending_expected_failures():
    from pytest_bfcl.gate.decision import GateSettings, compare

    before = {f"simple_python_{i}": True for i in range(50)}
    now = dict(before) | {f"simple_python_{i}": False for i in range(30)}
    gate = compare(now, before, GateSettings())
    pending = (
        '<testcase classname="bfcl.simple_python" name="simple_python_{n}" time="0.0">'
        '<skipped type="pytest.xfail" message="' + PENDING + ': simple_python_{n} &quot;x&quot;" />'
        "</testcase>"
    )
    known = (
        '<testcase classname="bfcl.simple_python" name="simple_python_40" time="0.0">'
        '<skipped type="pytest.xfail" message="known failure (fails in the baseline)" />'
        "</testcase>"
    )
    text = pending.format(n=1) + known + pending.format(n=2)
    settled, failed = settle_pending_testcases(text, Settlement(gate))
    assert failed == 2
    assert settled.count("<failure ") == 2 and "known failure (fails in the baseline)" in settled
    failures = list(ET.fromstring(f"<suite>{settled}</suite>").iter("failure"))
    assert (
        failures[0]
        .get("message", "")
        .startswith("REGRESSION (passed in the baseline; the gate failed on simple_python, p=")
    )
    assert failures[0].get("message", "").endswith(': simple_python_1 "x"')  # escaped in


def test_thresholds_alone_fail_the_entries_of_a_failing_score(
    pytester, dataset, data_source, tmp_path
):
    """No baseline, thresholds: a failing entry is pending them; a threshold met leaves no
    entry failed, one missed fails the entries of its score."""
    results = write_results(tmp_path / "r", dataset, ids(range(20)))  # 95 %
    junit = tmp_path / "junit.xml"
    common = [
        f"--bfcl-model=replay:{results}",
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-category=simple_python",
        f"--junitxml={junit}",
    ]
    met = pytester.runpytest(*common, "--bfcl-min-score=simple_python=90")
    met.assert_outcomes(passed=380, xfailed=20)
    assert met.ret == 0
    assert _junit(junit)[0]["failures"] == "0"
    missed = pytester.runpytest(*common, "--bfcl-min-score=simple_python=99")
    missed.assert_outcomes(passed=380, failed=20)
    assert missed.ret == pytest.ExitCode.TESTS_FAILED
    counts, _, messages = _junit(junit)
    assert counts["failures"] == "21"  # the entries, and the category's summary testcase
    assert messages["simple_python"].startswith("simple_python: 95.00% is below the minimum")
    assert messages["simple_python_3"].startswith("FAILED threshold simple_python: ")
