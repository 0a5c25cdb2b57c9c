"""The sequential gate through the plugin (--bfcl-sequential with the noisy oracle): an unchanged
model passes, mostly after its first stage, with the stages it did not need neither incomplete
nor junit testcases; a planted regression extends the run, says why, and blocks; the settings
and the process layout it refuses."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

CATEGORIES = "simple_python,multiple,live_simple"
FLAKY = "oracle:flaky=0.1"


def _run(pytester, data_source, *extra: str, model: str):
    return pytester.runpytest(
        f"--bfcl-model={model}",
        f"--bfcl-data={data_source.data_dir}",
        f"--bfcl-category={CATEGORIES}",
        "-p",
        "no:cacheprovider",
        "--bfcl-list-failures=0",
        *extra,
    )


@pytest.fixture
def baseline(pytester, data_source, tmp_path):
    path = tmp_path / "baseline.json"
    _run(pytester, data_source, f"--bfcl-save-baseline={path}", model=f"{FLAKY},seed=1")
    assert path.is_file()
    return path


def _testcases(path):
    """The junit file's entry testcases (not its summary testcases)."""
    cases = ET.parse(path).getroot().iter("testcase")
    return [c for c in cases if c.get("classname", "").startswith("bfcl.") and
            c.get("classname") != "bfcl.summary"]  # fmt: skip


def test_an_unchanged_model_passes_mostly_early_and_unasked_stages_are_no_testcases(
    pytester, data_source, baseline, tmp_path
):
    reached = []
    for seed in (2, 3, 4):
        report, junit = tmp_path / f"r{seed}.json", tmp_path / f"j{seed}.xml"
        result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                      f"--bfcl-report={report}", f"--junitxml={junit}",
                      model=f"{FLAKY},seed={seed}")  # fmt: skip
        out = result.stdout.str()
        assert result.ret == 0, out
        assert "bfcl sequential gate: stages of 10%, 30%, 100% of each category" in out
        assert "its last stage detects (80% power)" in out
        data = json.loads(report.read_text())
        record = data["sequential"]
        assert data["complete"] and data["incomplete"] == []
        assert record["full"]["entries"] == 858 and record["costs"][-1] == record["full"]
        asked = record["asked"]["entries"]
        assert asked == record["costs"][record["reached"] - 1]["entries"]
        assert "BFCL sequential gate" in out and f"asked {asked} of 858 entries" in out
        assert len(_testcases(junit)) == sum(
            c["total"] + c.get("skipped", 0) for c in data["categories"].values()
        )
        if record["reached"] < 3:
            assert f"{858 - asked} deselected" in out
            assert len(_testcases(junit)) < 858
        reached.append(record["reached"])
    assert sum(r < 3 for r in reached) >= 2, reached  # most stop before the whole selection


def test_a_regression_extends_the_run_says_why_and_blocks(
    pytester, data_source, baseline, tmp_path
):
    report = tmp_path / "r.json"
    result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                  f"--bfcl-report={report}", model=f"{FLAKY},fail=0.05,seed=2")  # fmt: skip
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "bfcl: stage 2 of 3: " in out and "more entries" in out
    assert "BFCL gate: FAILED" in out
    assert "sampled:" not in out  # the whole selection was asked: scored as a full run
    record = json.loads(report.read_text())["sequential"]
    assert record["reached"] == 3 and record["share_of_queries"] == 1.0
    assert "ordinary gate decides" in record["reason"]


def test_what_the_sequential_gate_cannot_run_with_is_refused_in_one_line(
    pytester, data_source, baseline
):
    alone = _run(pytester, data_source, "--bfcl-sequential", model=FLAKY)
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    assert "needs --bfcl-baseline" in alone.stderr.str()
    sampled = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                   "--bfcl-sample=0.1", model=FLAKY)  # fmt: skip
    assert sampled.ret == pytest.ExitCode.USAGE_ERROR
    assert "drop --bfcl-sample" in sampled.stderr.str()
    workers = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                   "-n", "2", model=FLAKY)  # fmt: skip
    assert workers.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in workers.stderr.str().splitlines() if "one process" in line]
    assert len(lines) == 1


def test_a_sampled_gate_says_what_it_detects_before_it_asks_anything(
    pytester, data_source, baseline
):
    result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sample=0.1",
                  model=f"{FLAKY},seed=2")  # fmt: skip
    lines = result.stdout.str().splitlines()
    said = [n for n, line in enumerate(lines) if line.startswith("bfcl: this sample detects")]
    first_row = next(n for n, line in enumerate(lines) if line.startswith("bfcl/"))
    assert len(said) == 1 and said[0] < first_row
    assert "points over all entries" in lines[said[0]] and "--bfcl-sequential" in lines[said[0]]
