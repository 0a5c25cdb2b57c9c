"""Regression gating end to end: baselines, outcomes, the significance gate, thresholds and
sampled pull-request runs (the scenario fixture ``gate_env`` is in gate_scenario.py)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from gate_scenario import ids, write_results

from pytest_bfcl.gate.decision import GateSettings, compare, mcnemar_exact


def test_baseline_file_records_verdicts_and_identity(gate_env, data_source):
    _, baseline = gate_env
    data = json.loads(baseline.read_text())
    assert data["format"] == "pytest-bfcl-baseline/3"
    assert data["metadata"]["samples"] == 1 and data["metadata"]["scoring_rules"] >= 1
    assert len(data["verdicts"]) == 400 and sum(data["verdicts"].values()) == 380
    assert data["totals"] == {"simple_python": {"expected": 400, "scored": 400}}
    assert data["metadata"]["dataset"]["version"] == "custom"
    assert data["metadata"]["mode"] == "fc" and data["metadata"]["categories"] == ["simple_python"]


def test_equal_run_passes_with_known_failures_as_xfail(gate_env):
    run, _ = gate_env
    result = run(ids(range(20)))
    result.assert_outcomes(passed=380, xfailed=20)
    assert result.ret == 0
    assert "BFCL gate: passed" in result.stdout.str()


def test_real_regression_fails_and_names_category_drop_p_value_and_ids(gate_env):
    run, _ = gate_env
    result = run(ids(range(20)) | ids(range(100, 140)))  # 40 flips out of 400
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "BFCL gate: FAILED" in out
    line = next(x for x in out.splitlines() if x.startswith("simple_python ") and "FAILED" in x)
    assert "95.00%" in line and "85.00%" in line and "-10.00" in line
    assert "9.09e-13" in line  # one-sided exact McNemar: 0.5**40
    assert "regressed in simple_python: simple_python_100, simple_python_101" in out
    assert "REGRESSION simple_python_100 [simple_python] " in out  # the closing list
    assert out.count("REGRESSION simple_python_1") == 20  # regressions first, 20 shown
    assert "... and 20 more" in out


def test_two_flips_are_listed_but_do_not_fail(gate_env):
    run, _ = gate_env
    result = run(ids(range(20)) | ids([200, 201]))
    result.assert_outcomes(passed=378, xfailed=22)  # worse within the noise: expected failures
    assert result.ret == 0
    assert (
        "regressed (within noise) in simple_python: simple_python_200, simple_python_201"
        in result.stdout.str()
    )


def test_improvements_never_fail(gate_env):
    run, _ = gate_env
    result = run(ids(range(5)))  # 15 of the baseline's failures now pass
    result.assert_outcomes(passed=380, xfailed=5, xpassed=15)
    assert result.ret == 0


def test_gate_any_fails_on_a_single_flip(gate_env):
    run, _ = gate_env
    assert run(ids(range(20)) | ids([300]), "--bfcl-gate=any").ret == pytest.ExitCode.TESTS_FAILED
    off = run(ids(range(20)) | ids(range(100, 140)), "--bfcl-gate=off", name="off")
    assert off.ret == 0
    out = off.stdout.str()  # a significant drop, not enforced: never said to pass
    assert "BFCL gate: passed" not in out and "BFCL gate: FAILED" not in out
    assert "BFCL gate: off (--bfcl-gate=off: compared, not enforced)" in out


def test_baseline_from_other_data_is_refused(gate_env, tmp_path):
    run, baseline = gate_env
    data = json.loads(baseline.read_text())
    data["metadata"]["dataset"]["sha256"] = "0" * 64
    data["metadata"]["mode"] = "prompt"
    baseline.write_text(json.dumps(data))
    refused = run(ids(range(20)))
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    err = refused.stderr.str()
    assert (
        "does not fit this run" in err and "dataset sha256 differs" in err and "mode differs" in err
    )
    accepted = run(ids(range(20)), "--bfcl-baseline-common", name="common")
    assert accepted.ret == 0
    assert "compared on the entries both runs have" in accepted.stdout.str()


def test_not_a_baseline_is_refused(pytester, data_source, tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text('{"hello": 1}')
    result = pytester.runpytest(
        "--bfcl-model=oracle", f"--bfcl-baseline={bad}", f"--bfcl-data={data_source.data_dir}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "not a pytest-bfcl baseline" in result.stderr.str()


def test_absolute_thresholds_without_baseline(pytester, dataset, data_source, tmp_path):
    results = write_results(tmp_path / "r", dataset, ids(range(20)))  # 95 %
    common = [
        f"--bfcl-model=replay:{results}",
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-category=simple_python",
    ]
    passing = pytester.runpytest(*common, "--bfcl-min-score=simple_python=90")
    assert passing.ret == 0
    failing = pytester.runpytest(
        *common, "--bfcl-min-score=simple_python=99", "--bfcl-min-score=overall=10"
    )
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    out = failing.stdout.str()
    assert "simple_python: 95.00% is below the minimum of 99.00%" in out
    assert "overall: not run" in out
    plain = pytester.runpytest(*common)
    assert plain.ret == pytest.ExitCode.TESTS_FAILED  # without a gate, failures fail


def test_sampled_pull_request_run_uses_only_sampled_baseline_entries(gate_env, tmp_path):
    run, _ = gate_env
    report = tmp_path / "sample.json"
    # A 10 % sample runs 40 entries; the gate compares them with their own baseline verdicts.
    result = run(ids(range(20)), "--bfcl-sample=0.1", "--bfcl-seed=7", f"--bfcl-report={report}")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("xfailed", 0) == 40
    data = json.loads(report.read_text())
    assert data["metadata"]["sample"] == 0.1 and data["metadata"]["seed"] == 7
    assert data["gate"]["comparisons"][0]["paired"] == 40
    assert result.ret == 0


def test_xdist_gives_identical_verdicts_reports_and_exit_status(gate_env, pytester, tmp_path):
    pytest.importorskip("xdist")
    run, _ = gate_env
    runs = {}
    for workers in ("0", "2"):
        report = tmp_path / f"report-{workers}.json"
        junit = tmp_path / f"junit-{workers}.xml"
        result = run(
            ids(range(20)) | ids(range(100, 140)),
            "-n",
            workers,
            f"--bfcl-report={report}",
            f"--junitxml={junit}",
            name=f"x{workers}",
        )
        verdicts = {
            c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}.get(
                "bfcl_valid"
            )
            for c in ET.parse(junit).getroot().iter("testcase")
        }
        data = json.loads(report.read_text())
        runs[workers] = (result.ret, verdicts, data["categories"], data["groups"], data["gate"])
    assert runs["0"] == runs["2"]
    assert runs["0"][0] == pytest.ExitCode.TESTS_FAILED


# -- units --------------------------------------------------------------------------------------


def test_mcnemar_exact():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(2, 0) == 0.5
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(40, 0) == pytest.approx(2 * 0.5**40)
    assert mcnemar_exact(10, 2) == pytest.approx(0.03857421875)


def test_compare_groups_and_overall():
    baseline = {f"simple_python_{i}": True for i in range(100)} | {
        f"irrelevance_{i}": True for i in range(50)
    }
    current = dict(baseline) | {f"simple_python_{i}": False for i in range(30)}
    result = compare(current, baseline, GateSettings())
    by_name = {c.name: c for c in result.comparisons}
    assert by_name["simple_python"].failed and by_name[
        "simple_python"
    ].drop_points == pytest.approx(30)
    assert not by_name["irrelevance"].failed
    assert "non_live" not in by_name  # java/javascript/multiple... were not run


def test_gate_table_lines_stay_within_200_characters():
    from pytest_bfcl.report.render import gate_block

    ids = [f"memory_rec_sum_{i}-notetaker-{i % 20}" for i in range(150)]
    baseline = dict.fromkeys(ids, True) | {f"memory_kv_{i}-customer-0": True for i in range(150)}
    current = dict(baseline) | dict.fromkeys(ids[:60], False)
    result = compare(current, baseline, GateSettings(), common_only=True)
    lines = gate_block(result)
    assert max(len(line) for line in lines) <= 200
    regressed = next(line for line in lines if line.startswith("regressed in memory_rec_sum"))
    assert regressed.endswith("more") and "memory_rec_sum_0-notetaker-0" in regressed
    assert any("Holm over" in line for line in lines)
    unchanged = next(line for line in lines if line.startswith("memory_kv "))
    assert "-0.00" not in unchanged and "+0.00" in unchanged


def test_counts_of_one_are_worded_in_the_singular():
    from pytest_bfcl.report.markdown import gate_reasons
    from pytest_bfcl.report.render import gate_block

    # one category only, whose groups are itself: one comparison in the family
    baseline = {f"simple_python_{i}": True for i in range(40)}
    result = compare(dict(baseline), baseline, GateSettings(), common_only=True)
    assert result.family == 1
    assert any(line.startswith("Holm over 1 comparison (") for line in gate_block(result))
    assert "1 comparison held to one false-alarm rate of 5% (Holm)" in gate_reasons(result)
    assert not any("1 comparisons" in line for line in [*gate_block(result), *gate_reasons(result)])
