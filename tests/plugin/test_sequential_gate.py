"""The sequential gate through the plugin (--bfcl-sequential with the noisy oracle): an unchanged
model passes asking little, with the stages it did not need neither incomplete nor junit
testcases; the stages come from the commit and are recorded; a regression extends the run,
says why, and blocks; a strong one fails early; a selection narrowed on the command line is
staged as it stands; the settings and the process layout it refuses."""

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
    shares = []
    for seed in (2, 3, 4):
        report, junit = tmp_path / f"r{seed}.json", tmp_path / f"j{seed}.xml"
        result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                      f"--bfcl-report={report}", f"--junitxml={junit}", f"--bfcl-seed={seed}",
                      model=f"{FLAKY},seed={seed}")  # fmt: skip
        out = result.stdout.str()
        assert result.ret == 0, out
        assert "bfcl sequential gate: stages of 10%, 30%, 100% of each category" in out
        assert f"stages drawn with seed {seed} (--bfcl-seed)" in out
        assert "the whole selection detects (80% power)" in out
        data = json.loads(report.read_text())
        record = data["sequential"]
        assert data["complete"] and data["incomplete"] == []
        assert record["full"]["entries"] == 858 and record["seed"] == seed
        asked = record["asked"]["entries"]
        scored = sum(c["total"] + c.get("skipped", 0) for c in data["categories"].values())
        assert asked == scored  # what ran, not what a stage would hold
        assert "BFCL sequential gate" in out and f"asked {asked} of 858 entries" in out
        assert len(_testcases(junit)) == scored
        if asked < 858:
            assert f"{858 - asked} deselected" in out
        assert set(record["by_category"]) == set(CATEGORIES.split(","))
        shares.append(record["share_of_queries"])
    assert sum(shares) / len(shares) < 0.6, shares  # an unchanged model asks little


def test_the_stages_are_drawn_from_the_commit_and_recorded(
    pytester, data_source, baseline, tmp_path, monkeypatch
):
    seeds = []
    for sha in ("1111111", "2222222", "1111111"):
        monkeypatch.setenv("GITHUB_SHA", sha)
        report = tmp_path / f"r{sha}.json"
        result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                      f"--bfcl-report={report}", model=f"{FLAKY},seed=2")  # fmt: skip
        assert result.ret == 0, result.stdout.str()
        assert "(from GITHUB_SHA)" in result.stdout.str()
        data = json.loads(report.read_text())
        assert data["metadata"]["seed"] == data["sequential"]["seed"]
        seeds.append(data["sequential"]["seed"])
    assert seeds[0] == seeds[2] != seeds[1]  # a rerun of a commit draws the same stages


def test_a_regression_extends_the_run_says_why_and_blocks(
    pytester, data_source, baseline, tmp_path
):
    report = tmp_path / "r.json"
    result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                  f"--bfcl-report={report}", "--bfcl-seed=1",
                  model=f"{FLAKY},fail=0.03,seed=2")  # fmt: skip
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "bfcl: stage 2 of 3: " in out and "not ruled out" in out and "more entries" in out
    assert "BFCL gate: FAILED" in out
    record = json.loads(report.read_text())["sequential"]
    assert "fails" in record["reason"]


def test_a_strong_regression_fails_early(pytester, data_source, baseline, tmp_path):
    report = tmp_path / "r.json"
    result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                  f"--bfcl-report={report}", "--bfcl-seed=1",
                  model=f"{FLAKY},fail=0.3,seed=2")  # fmt: skip
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    data = json.loads(report.read_text())
    record = data["sequential"]
    assert record["failed_early"] and record["reached"] == 1
    assert "early rejection" in out and data["incomplete"] == []
    assert record["asked"]["entries"] < 200


def test_a_narrowed_selection_is_staged_as_it_stands(pytester, data_source, baseline, tmp_path):
    # -k picks 111 simple_python entries; the plain gate and the sequential one both fail a
    # model that fails a fifth of the entries on them, and count what ran
    narrowed = ("-k", "simple_python_1")
    model = f"{FLAKY},fail=0.2,seed=2"
    plain = _run(pytester, data_source, f"--bfcl-baseline={baseline}", *narrowed, model=model)
    assert plain.ret == pytest.ExitCode.TESTS_FAILED
    report = tmp_path / "r.json"
    # stages drawn from a fixed seed, not from the commit checked out (the same on every one)
    result = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                  f"--bfcl-report={report}", "--bfcl-seed=1", *narrowed, model=model)  # fmt: skip
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    data = json.loads(report.read_text())
    record = data["sequential"]
    assert record["full"]["entries"] == 111 and data["incomplete"] == []
    assert record["asked"]["entries"] == data["categories"]["simple_python"]["total"]
    assert f"asked {record['asked']['entries']} of 111 entries" in out
    # an unchanged model on the same selection passes, never "incomplete"
    same = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
                f"--bfcl-report={report}", "--bfcl-seed=1", *narrowed,
                model=f"{FLAKY},seed=2")  # fmt: skip
    assert same.ret == 0, same.stdout.str()
    assert json.loads(report.read_text())["incomplete"] == []


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
    bar = _run(pytester, data_source, f"--bfcl-baseline={baseline}", "--bfcl-sequential",
               "--bfcl-min-score=overall=50", model=FLAKY)  # fmt: skip
    assert bar.ret == pytest.ExitCode.USAGE_ERROR
    assert len([x for x in bar.stderr.str().splitlines() if "--bfcl-min-score" in x]) == 1
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
