"""Run integrity: completeness is part of the verdict, baselines that do not add up are refused,
and set-up problems end the session once, before anything is generated."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from pytest_bfcl.check.oversized import oversized_answer_verdict
from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.gate.baseline import BaselineError, load_baseline, save_baseline, tampering
from pytest_bfcl.gate.completeness import incompleteness, top_reason
from pytest_bfcl.gate.decision import GateSettings, evaluate_gate
from pytest_bfcl.models.base import Task
from pytest_bfcl.models.replay import ReplayError, ReplayModel
from pytest_bfcl.run import preflight
from pytest_bfcl.scores.board import ScoreBoard
from pytest_bfcl.testing.result_files import write_oracle_results


def oracle_results(root: Path, dataset, category: str, group: str, drop=(), wrong=()) -> Path:
    """Oracle fc results for a category in the result layout; ``drop`` left out, ``wrong``
    answered with text. Returns the result root."""
    write_oracle_results(root, dataset, category, dict.fromkeys(wrong, "no call"), drop)
    return root


@pytest.fixture
def common(data_source) -> list[str]:
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider"]


# -- the score board ---------------------------------------------------------------------------


def test_board_counts_missing_skipped_errored_and_not_run():
    board = ScoreBoard()
    board.expect({"simple_python": {f"simple_python_{i}" for i in range(10)}})
    for i in range(5):
        board.add_verdict(f"simple_python_{i}", "simple_python", True)
    board.add_skip("simple_python", "no stored result for simple_python_5 in x.json")
    board.add_skip("simple_python", "no stored result for simple_python_6 in x.json")
    board.add_error("simple_python")
    cat = board.scores().categories["simple_python"]
    assert (cat.expected, cat.total, cat.missing) == (10, 5, 5)
    assert (cat.skipped, cat.errors, cat.not_run) == (2, 1, 2)
    lines = incompleteness(board.scores())
    assert len(lines) == 1
    assert lines[0].startswith("simple_python: 5 of 10 not scored (2 skipped: no stored result")
    assert "x.json, and 1 other entry alike; 1 error; 2 not run)" in lines[0]


def test_excluded_entries_are_not_missing():
    board = ScoreBoard()
    board.expect({"multiple": {"multiple_0"}})
    board.add_verdict("multiple_0", "multiple", True)
    board.add_skip("web_search_base", "web search is off", excluded=True)
    assert incompleteness(board.scores()) == []
    assert board.scores().categories["web_search_base"].excluded == 1


def test_a_category_expected_but_never_reported_is_listed():
    board = ScoreBoard()
    board.expect({"live_multiple": {f"live_multiple_{i}-0-0" for i in range(1053)}})
    lines = incompleteness(board.scores())
    assert lines == ["live_multiple: 1053 of 1053 not scored (1053 not run)"]


def test_summaries_stay_short_whatever_the_number_of_reasons():
    reasons = {
        f"no stored result for live_multiple_{i}-0-0 in some/file.json": 1 for i in range(1053)
    }
    text = top_reason(reasons)
    assert len(text) < 250
    # one reason naming a different entry each time is one reason, not 1053
    assert text == (
        "no stored result for live_multiple_0-0-0 in some/file.json, and 1,052 other entries alike"
    )
    reasons["the API does not answer"] = 2
    assert top_reason(reasons).endswith("alike (and 1 other reason)")
    assert top_reason({"a": 1, "b": 3, "c": 1}) == "b (and 2 other reasons)"


def test_unpaired_entries_are_named():
    board = ScoreBoard()
    for i in range(12):
        board.add_verdict(f"simple_python_{i}", "simple_python", True)
    unpaired = board.unpaired({"simple_python_0": True}, {"simple_python"})
    assert unpaired[:3] == ["simple_python_1", "simple_python_2", "simple_python_3"]
    assert unpaired[-1] == "simple_python_11"  # natural order, not text order
    assert board.unpaired({}, {"multiple"}) == []


def test_incomplete_fails_the_gate_unless_allowed():
    board = ScoreBoard()
    board.add_verdict("simple_python_0", "simple_python", True)
    scores = board.scores()
    settings = GateSettings()
    gate = evaluate_gate(scores, board.verdicts, {"simple_python_0": True}, settings,
                         incomplete=["x: 1 of 2 not scored"])  # fmt: skip
    assert gate is not None and gate.failed
    allowed = evaluate_gate(scores, board.verdicts, {"simple_python_0": True}, settings,
                            incomplete=["x"], allow_incomplete=True)  # fmt: skip
    assert allowed is not None and not allowed.failed
    assert evaluate_gate(scores, board.verdicts, None, settings, incomplete=["x"]) is None


# -- baselines that do not add up ---------------------------------------------------------------


def _baseline(tmp_path: Path, n: int = 400) -> Path:
    path = tmp_path / "baseline.json"
    verdicts = {f"simple_python_{i}": i % 7 != 0 for i in range(n)}
    save_baseline(path, verdicts, {"mode": "fc", "categories": ["simple_python"]}, {},
                  {"simple_python": 400})  # fmt: skip
    return path


def test_baseline_records_totals_and_digest(tmp_path):
    data = json.loads(_baseline(tmp_path).read_text())
    assert data["format"] == "pytest-bfcl-baseline/3"
    assert data["totals"] == {"simple_python": {"expected": 400, "scored": 400}}
    assert len(data["digest"]) == 64
    assert load_baseline(tmp_path / "baseline.json").verdicts["simple_python_1"] is True


def test_thinned_baseline_is_refused(tmp_path):
    path = _baseline(tmp_path)
    data = json.loads(path.read_text())
    data["verdicts"] = dict(list(data["verdicts"].items())[:10])
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match="simple_python has 10 verdicts but recorded 400"):
        load_baseline(path)


def test_flipped_baseline_verdict_breaks_the_digest(tmp_path):
    path = _baseline(tmp_path)
    data = json.loads(path.read_text())
    data["verdicts"]["simple_python_0"] = True  # was False
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match="do not match their recorded digest"):
        load_baseline(path)


def test_legacy_baseline_is_checked_against_its_category_totals(tmp_path):
    path = tmp_path / "old.json"
    verdicts = {f"multiple_{i}": True for i in range(10)}
    legacy = {
        "format": "pytest-bfcl-baseline/1",
        "metadata": {"mode": "fc"},
        "verdicts": verdicts,
        "categories": {"multiple": {"total": 200}},
    }
    path.write_text(json.dumps(legacy))
    with pytest.raises(BaselineError, match="multiple has 10 verdicts but recorded 200"):
        load_baseline(path)
    legacy["categories"]["multiple"]["total"] = 10
    path.write_text(json.dumps(legacy))
    assert not tampering(load_baseline(path))


# -- end to end -------------------------------------------------------------------------------


@pytest.fixture
def recorded(pytester, dataset, tmp_path, common):
    """A baseline of simple_python + multiple from complete oracle results."""
    root = tmp_path / "base"
    oracle_results(root, dataset, "simple_python", "non_live")
    oracle_results(root, dataset, "multiple", "non_live")
    baseline = tmp_path / "baseline.json"
    result = pytester.runpytest(
        f"--bfcl-model=replay:{root}", "--bfcl-category=simple_python,multiple",
        f"--bfcl-save-baseline={baseline}", "--tb=no", "-q", *common,
    )  # fmt: skip
    assert result.ret == 0
    return baseline


def test_a_missing_result_file_fails_the_gate(pytester, dataset, tmp_path, common, recorded):
    now = oracle_results(tmp_path / "now", dataset, "simple_python", "non_live")  # no multiple
    report = tmp_path / "report.json"
    args = [f"--bfcl-model=replay:{now}", "--bfcl-category=simple_python,multiple",
            f"--bfcl-baseline={recorded}", f"--bfcl-report={report}", "--tb=no", "-q", *common]  # fmt: skip
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "BFCL gate: FAILED" in out
    assert "multiple: 200 of 200 not scored (200 skipped: no stored result" in out
    data = json.loads(report.read_text())
    assert data["complete"] is False
    assert data["categories"]["multiple"]["missing"] == 200
    assert data["categories"]["simple_python"]["missing"] == 0

    allowed = pytester.runpytest(*args, "--bfcl-allow-incomplete")
    assert allowed.ret == pytest.ExitCode.OK
    assert "incomplete run (allowed by --bfcl-allow-incomplete)" in allowed.stdout.str()
    assert json.loads(report.read_text())["complete"] is False


def test_most_entries_missing_fails_the_gate(pytester, dataset, tmp_path, common, recorded):
    drop = {e.id for e in dataset.entries("simple_python")[10:]}
    now = oracle_results(tmp_path / "now", dataset, "simple_python", "non_live", drop=drop)
    oracle_results(tmp_path / "now", dataset, "multiple", "non_live")
    result = pytester.runpytest(
        f"--bfcl-model=replay:{now}", "--bfcl-category=simple_python,multiple",
        f"--bfcl-baseline={recorded}", "--tb=no", "-q", *common,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "simple_python: 390 of 400 not scored" in result.stdout.str()


def test_baseline_categories_left_out_of_the_run_are_missing(
    pytester, dataset, tmp_path, common, recorded
):
    now = oracle_results(tmp_path / "now", dataset, "simple_python", "non_live")
    result = pytester.runpytest(
        f"--bfcl-model=replay:{now}", "--bfcl-category=simple_python",
        f"--bfcl-baseline={recorded}", "--tb=no", "-q", *common,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "multiple: 200 of 200 not scored (200 not run)" in result.stdout.str()
    common_only = pytester.runpytest(
        f"--bfcl-model=replay:{now}", "--bfcl-category=simple_python",
        f"--bfcl-baseline={recorded}", "--bfcl-baseline-common", "--tb=no", "-q", *common,
    )  # fmt: skip
    assert common_only.ret == pytest.ExitCode.OK


def test_thresholds_fail_an_incomplete_run(pytester, dataset, tmp_path, common):
    drop = {e.id for e in dataset.entries("multiple")[:3]}
    now = oracle_results(tmp_path / "now", dataset, "multiple", "non_live", drop=drop)
    result = pytester.runpytest(
        f"--bfcl-model=replay:{now}", "--bfcl-category=multiple", "--bfcl-min-score=multiple=50",
        "--tb=no", "-q", *common,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "multiple: 3 of 200 not scored" in result.stdout.str()


def test_a_thinned_baseline_file_stops_the_run(pytester, tmp_path, common, recorded):
    data = json.loads(recorded.read_text())
    data["verdicts"] = dict(list(data["verdicts"].items())[:10])
    recorded.write_text(json.dumps(data))
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=simple_python",
                                f"--bfcl-baseline={recorded}", *common)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "does not add up" in result.stderr.str()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"id": "multiple_0", "result": []}\n{"id": "multiple_1", "res', ":2: invalid JSON"),
        (b'{"id": "multiple_0", "result": "\xff\xfe"}\n', ":1: not UTF-8 text"),
        (
            b'{"id": "multiple_0", "result": []}\n{"id": "multiple_0", "result": []}\n',
            ":2: id 'multiple_0' appears again (first at line 1)",
        ),
        (
            b'{"id": "multiple_0", "result": []}\n{"id": ["multiple_1"], "result": []}\n',
            ":2: 'id' must be a string, not a list",
        ),
        (b'{"id": 7, "result": []}\n', ":1: 'id' must be a string, not a int"),
        (b'{"id": null, "result": []}\n', ":1: 'id' must be a string, not null"),
    ],
    ids=["broken-line", "not-utf8", "duplicate-id", "list-id", "int-id", "null-id"],
)
def test_a_broken_result_file_ends_the_session_once(pytester, tmp_path, common, content, message):
    path = tmp_path / "res" / "non_live" / "BFCL_v4_multiple_result.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    result = pytester.runpytest(f"--bfcl-model=replay:{tmp_path / 'res'}",
                                "--bfcl-category=multiple", *common)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"BFCL_v4_multiple_result.json{message}" in err
    assert err.count("pytest-bfcl:") == 1
    assert "Traceback" not in err + result.stdout.str()
    assert "passed" not in result.stdout.str() and "error" not in result.stdout.str()


# -- a gate that cannot be switched off by accident --------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--bfcl-category=simple_python"],
        ["--bfcl-baseline=baseline.json", "--bfcl-min-score=overall=80"],
        ["--bfcl-model=", "--bfcl-report=r.json"],
        ["--bfcl-allow-incomplete"],
    ],
)
def test_bfcl_options_without_a_model_are_one_usage_error(pytester, args):
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    lines = [line for line in err.splitlines() if "pytest-bfcl" in line]
    assert len(lines) == 1 and "without a model" in lines[0], err
    assert "--bfcl-model=NAME" in lines[0] and "passed" not in result.stdout.str()
    flags = [a.split("=")[0] for a in args if a != "--bfcl-model="]
    assert all(flag in lines[0] for flag in flags)


def test_bfcl_ini_values_without_a_model_are_one_usage_error(pytester):
    pytester.makepyfile("def test_ok():\n    assert True\n")
    pytester.makeini("[pytest]\nbfcl_baseline = baseline.json\nbfcl_category = simple_python\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("pytest-bfcl:") == 1 and "Traceback" not in err
    assert "bfcl_baseline, bfcl_category set in" in err and "-p no:bfcl" in err
    # leaving the plugin out on purpose runs the project's own tests
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:bfcl").assert_outcomes(
        passed=1
    )


@pytest.mark.parametrize(
    ("key", "hint"),
    [("bfcl_modle", "did you mean bfcl_mode or bfcl_model?"), ("bfcl_basline", "bfcl_baseline")],
)
def test_an_unknown_bfcl_ini_key_is_an_error_naming_the_closest(pytester, data_source, key, hint):
    pytester.makepyfile("def test_ok():\n    assert True\n")
    pytester.makeini(f"[pytest]\n{key} = oracle\nother_plugin_key = 1\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("pytest-bfcl:") == 1
    assert f"unknown ini key {key!r} in " in err and hint in err
    assert "other_plugin_key" not in err  # other keys keep pytest's own behaviour


def test_without_any_bfcl_option_the_plugin_stays_out_of_the_way(pytester):
    pytester.makepyfile("def test_ok():\n    assert True\n")
    pytester.makeini("[pytest]\nother_plugin_key = 1\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested 100000 deep (at most 64)"),
        (b'{"format": "pytest-bfcl-baseline/2", "metadata": {"m": "\xff"}}', "is not UTF-8"),
        (b'{"format": "pytest-bfcl-baseline/2", "metadata": {', "is not JSON"),
    ],
    ids=["deep", "not-utf8", "cut"],
)
def test_a_baseline_that_cannot_be_read_is_one_line_naming_it(
    pytester, tmp_path, common, content, message
):
    path = tmp_path / "baseline.json"
    path.write_bytes(content)
    with pytest.raises(BaselineError) as raised:
        load_baseline(path)
    assert str(path) in str(raised.value) and message in str(raised.value)
    result = pytester.runpytest_subprocess("--bfcl-model=oracle", "--bfcl-category=simple_python",
                                           f"--bfcl-baseline={path}", *common)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("pytest-bfcl:") == 1 and f"baseline {path}" in err and message in err
    assert "INTERNALERROR" not in err + result.stdout.str() and "Traceback" not in err


def test_a_baseline_that_is_not_a_regular_file_is_refused(tmp_path):
    fifo = tmp_path / "baseline.json"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):  # a FIFO would block, a directory is no file
        with pytest.raises(
            BaselineError, match=f"cannot read baseline {path}: it is a .*, not a regular file"
        ):
            load_baseline(path)


def test_an_over_long_integer_in_a_result_line_is_the_models_answer(tmp_path):
    path = tmp_path / "non_live" / "BFCL_v4_multiple_result.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"id": "multiple_0", "result": [{"f": ' + "9" * 5000 + "}]}\n")
    model = ReplayModel(tmp_path, ScoringOptions("fc", True))
    model.preflight(["multiple"])
    assert isinstance(model.records("multiple")["multiple_0"]["result"][0]["f"], float)


def test_missing_result_file_is_not_a_replay_error(tmp_path):
    (tmp_path / "non_live").mkdir()
    model = ReplayModel(tmp_path, ScoringOptions("fc", True))
    model.preflight(["multiple"])  # a partial result dir is reported as incomplete, not refused
    with pytest.raises(ReplayError):
        ReplayModel(tmp_path / "nowhere", ScoringOptions("fc", True))


def test_duplicate_ids_in_a_project_category_are_refused(pytester, tmp_path, common):
    questions = tmp_path / "acme.json"
    answers = tmp_path / "acme_answers.json"
    entry = {"id": "acme_0", "question": [[{"role": "user", "content": "hi"}]],
             "function": [{"name": "f", "description": "d",
                           "parameters": {"type": "dict", "properties": {}, "required": []}}]}  # fmt: skip
    questions.write_text(json.dumps(entry) + "\n" + json.dumps(entry) + "\n")
    answers.write_text('{"id": "acme_0", "ground_truth": [{"f": {}}]}\n' * 2)
    pytester.makeconftest(
        f"""
from pytest_bfcl.dataset.custom import CustomCategory
def pytest_bfcl_add_categories():
    return [CustomCategory(name="acme", questions=r"{questions}", answers=r"{answers}")]
"""
    )
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=acme", *common)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "entry id 'acme_0' appears more than once" in result.stderr.str()


def test_missing_packages_are_found_before_generation(monkeypatch):
    absent, extra = preflight.missing_packages("memory_vector", find=lambda name: None)
    assert absent == ["torch", "sentence_transformers", "faiss"] and extra == "memory"
    assert preflight.missing_packages("memory_kv", find=lambda name: None) == ([], "")


def test_missing_extra_ends_the_session_with_one_line(pytester, common, monkeypatch):
    real = preflight._find_spec
    monkeypatch.setattr(preflight, "_find_spec", lambda n: None if n == "faiss" else real(n))
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=memory_vector",
                                "--bfcl-web=off", *common)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "memory_vector needs faiss, not installed here: pip install 'pytest-bfcl[memory]'" in err
    assert "Traceback" not in err


def test_infrastructure_errors_are_one_line_each(pytester, common):
    pytester.makeconftest(
        """
from pytest_bfcl.errors import InfrastructureError
from pytest_bfcl.models.oracle import OracleModel

class Flaky(OracleModel):
    name = "flaky"
    def generate(self, task):
        if task.entry.id.endswith(("_1", "_2")):
            raise InfrastructureError("the disk is full at /tmp/x")
        return super().generate(task)

def pytest_bfcl_make_model(spec, settings, scoring, source, hook):
    return Flaky(scoring) if spec == "flaky" else None
"""
    )
    result = pytester.runpytest("--bfcl-model=flaky", "--bfcl-category=simple_javascript",
                                "-p", "no:randomly", *common)  # fmt: skip
    outcomes = result.parseoutcomes()
    assert outcomes["errors"] == 2
    out = result.stdout.str()
    assert out.count("\nInfrastructureError: the disk is full at /tmp/x\n") == 2
    assert "ERROR bfcl/simple_javascript::simple_javascript_1" in out
    assert "simple_javascript: 2 of 50 not scored (2 errors)" in out
    assert "Traceback" not in out and "raise InfrastructureError" not in out


def test_bfcl_marker_without_a_model_says_what_is_missing(pytester):
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest("-m", "bfcl", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "no --bfcl-model was given" in result.stdout.str()


# -- disk faults: one line each, the run goes on, nothing computed is lost ----------------------

DISK_FAULTS = '''
import errno, os
import pytest_bfcl.models.cache as cache
import pytest_bfcl.run.results_dir as results_dir

class HalfWrites:
    """os for the results writer: its 5th write puts half the line on disk, then the disk
    is full."""
    calls = 0
    def __getattr__(self, name):
        return getattr(os, name)
    def write(self, fd, data):
        HalfWrites.calls += 1
        if HalfWrites.calls >= 5:
            os.write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, data)

results_dir.os = HalfWrites()
real_write = cache._write_atomic
stored = []
def read_only_after_two(path, record):
    if len(stored) >= 2:
        raise OSError(errno.EROFS, "Read-only file system")
    stored.append(path)
    real_write(path, record)
cache._write_atomic = read_only_after_two
'''


def test_disk_faults_are_one_line_each_and_the_run_goes_on(
    pytester, dataset, data_source, tmp_path
):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    pytester.makeconftest(DISK_FAULTS)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={fake.base_url}",
            "--bfcl-category=live_parallel",
            f"--bfcl-data={data_source.data_dir}",
            "--bfcl-concurrency=1",
            f"--bfcl-results-dir={tmp_path / 'results'}",
            f"--bfcl-cache-dir={tmp_path / 'cache'}",
            f"--bfcl-report={blocker / 'report.json'}",
            f"--bfcl-html={tmp_path / 'report.html'}",
            "--bfcl-min-score=live_parallel=50",
            "-p",
            "no:cacheprovider",
        )
    out = result.stdout.str() + result.stderr.str()
    assert result.parseoutcomes() == {"passed": 16, "warnings": 2}, out[-3000:]
    assert result.ret == pytest.ExitCode.OK, out[-3000:]
    assert "Traceback" not in out and "INTERNALERROR" not in out
    # one message per place, naming the path and the error
    assert len(re.findall(r"cannot write the results directory at \S+: \[Errno 28\]", out)) == 1
    assert "(ENOSPC)" in out
    assert len(re.findall(r"cannot write the response cache at \S+: \[Errno 30\]", out)) == 1
    assert re.search(r"JSON report +\S+report.json: \[Errno (17|20)\] .* \(E(EXIST|NOTDIR)\)", out)
    # the score table, the gate and the reports that could be written are all there
    assert "BFCL V4 scores" in out and "BFCL gate: passed" in out
    assert "BFCL files not written" in out and (tmp_path / "report.html").is_file()
    # the results file holds the whole lines written before the disk filled, no half line
    stored = next((tmp_path / "results").rglob("BFCL_v4_live_parallel_result.json")).read_bytes()
    assert stored.endswith(b"\n") and len(stored.splitlines()) == 4
    assert all(json.loads(line)["id"] for line in stored.splitlines())
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2


def test_a_results_directory_under_a_file_is_one_warning(pytester, common, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = pytester.runpytest_subprocess(
        "--bfcl-model=oracle", "--bfcl-category=simple_javascript",
        f"--bfcl-results-dir={blocker / 'results'}", f"--bfcl-save-baseline={blocker / 'b.json'}",
        *common,
    )  # fmt: skip
    out = result.stdout.str() + result.stderr.str()
    assert result.parseoutcomes() == {"passed": 50, "warnings": 1}, out[-3000:]
    assert result.ret == pytest.ExitCode.OK
    assert out.count("cannot write the results directory at") == 1 and "Traceback" not in out
    assert re.search(r"baseline +\S+b.json: \[Errno (17|20)\] ", out)
    assert "BFCL V4 scores" in out


# -- replay files read bounded -------------------------------------------------------------------


def test_an_over_long_result_line_is_the_models_failure_never_held_whole(tmp_path, dataset):
    path = tmp_path / "non_live" / "BFCL_v4_multiple_result.json"
    path.parent.mkdir(parents=True)
    huge = json.dumps({"id": "multiple_1", "result": "x" * 3_000_000})
    path.write_text(
        '{"id": "multiple_0", "result": []}\n' + huge + '\n{"id": "multiple_2", "result": []}\n'
    )
    model = ReplayModel(tmp_path, ScoringOptions("fc", True), max_line_bytes=1_000_000)
    records = model.records("multiple")
    assert sorted(records) == ["multiple_0", "multiple_1", "multiple_2"]  # the next line is read
    entry = next(e for e in dataset.entries("multiple") if e.id == "multiple_1")
    generation = model.generate(Task(entry, None))
    assert generation.finish_reason == "response_too_large"
    assert generation.result.startswith("[the stored result was cut: its line is longer than")
    verdict = oversized_answer_verdict(generation, "multiple")
    assert verdict is not None and not verdict.valid


def test_an_over_long_line_without_its_id_first_names_file_and_line(tmp_path):
    path = tmp_path / "non_live" / "BFCL_v4_multiple_result.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"result": "' + "x" * 2_000_000 + '", "id": "multiple_0"}\n')
    model = ReplayModel(tmp_path, ScoringOptions("fc", True), max_line_bytes=1_000_000)
    with pytest.raises(
        ReplayError, match=r"BFCL_v4_multiple_result.json:1: the line is longer than 1000000 bytes"
    ):
        model.preflight(["multiple"])


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory"])
def test_a_result_file_that_is_no_regular_file_is_one_error_naming_it(tmp_path, kind):
    path = tmp_path / "non_live" / "BFCL_v4_multiple_result.json"
    path.parent.mkdir(parents=True)
    (tmp_path / "non_live" / "BFCL_v4_simple_python_result.json").write_text("")
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    model = ReplayModel(tmp_path, ScoringOptions("fc", True))
    with pytest.raises(ReplayError, match=f"{path} is not a regular file"):
        model.preflight(["multiple"])


# -- a first run on a plain install ----------------------------------------------------------------


def _without(*modules: str):
    real = preflight._find_spec
    return lambda name: None if name in modules else real(name)


def test_default_selection_leaves_out_what_the_install_lacks():
    def hidden(name: str) -> object:  # an install with everything but these two
        return None if name in ("faiss", "ddgs") else object()

    left = preflight.left_out_for_extras(
        ("simple_python", "memory_vector", "web_search_base"), "live", "auto", find=hidden
    )
    assert left == {"memory_vector": "memory", "web_search_base": "web"}
    # a recording needs no web package; SerpAPI needs no DuckDuckGo client
    assert preflight.left_out_for_extras(("web_search_base",), "replay", "auto", hidden) == {}
    assert preflight.left_out_for_extras(("web_search_base",), "live", "serpapi", hidden) == {}
    line = preflight.left_out_line(
        {"memory_vector": "memory", "web_search_base": "web", "web_search_no_snippet": "web"}
    )
    assert "\n" not in line
    assert "memory_vector (pip install 'pytest-bfcl[memory]')" in line
    assert "web_search_base, web_search_no_snippet (pip install 'pytest-bfcl[web]')" in line


def test_first_run_on_a_plain_install_names_what_it_left_out(pytester, common, monkeypatch):
    monkeypatch.setattr(preflight, "_find_spec", _without("faiss", "ddgs"))
    result = pytester.runpytest("--bfcl-model=oracle", "--co", *common)
    assert result.ret == pytest.ExitCode.OK
    out = result.stdout.str()
    lines = [line for line in out.splitlines() if "left out of the default selection" in line]
    assert len(lines) == 1
    assert "memory_vector (pip install 'pytest-bfcl[memory]')" in lines[0]
    assert "web_search_base, web_search_no_snippet (pip install 'pytest-bfcl[web]')" in lines[0]
    assert "<BfclCategory memory_vector>" not in out and "web_search_base>" not in out
    assert "<BfclCategory memory_kv>" in out and "<BfclCategory simple_python>" in out


def test_a_category_asked_for_still_needs_its_extra(pytester, common, monkeypatch):
    monkeypatch.setattr(preflight, "_find_spec", _without("faiss"))
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=memory",
                                "--bfcl-web=off", *common)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "memory_vector needs " in err and "faiss" in err


def test_a_baseline_with_left_out_categories_fails_the_gate_as_incomplete(
    pytester, common, monkeypatch, tmp_path
):
    for package in ("torch", "sentence_transformers", "faiss"):  # the baseline's run needs them
        pytest.importorskip(package)
    baseline = tmp_path / "baseline.json"
    sample = ["--bfcl-sample=1", "--bfcl-web=off", "-p", "no:randomly"]
    first = pytester.runpytest("--bfcl-model=oracle", f"--bfcl-save-baseline={baseline}",
                               *sample, *common)  # fmt: skip
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()[-2000:]
    monkeypatch.setattr(preflight, "_find_spec", _without("faiss"))
    report = tmp_path / "report.json"
    second = pytester.runpytest("--bfcl-model=oracle", f"--bfcl-baseline={baseline}",
                                f"--bfcl-report={report}", *sample, *common)  # fmt: skip
    out = second.stdout.str()
    assert second.ret == pytest.ExitCode.TESTS_FAILED
    assert "left out of the default selection" in out
    assert "incomplete" in out and "memory_vector" in out
    data = json.loads(report.read_text())
    assert data["left_out"] == {"memory_vector": "memory"} and data["complete"] is False
    assert data["categories"]["memory_vector"]["missing"] == 1


def test_an_xdist_worker_takes_over_the_result_files_the_controller_read(tmp_path, dataset):
    path = tmp_path / "non_live" / "BFCL_v4_multiple_result.json"
    path.parent.mkdir(parents=True)
    huge = json.dumps({"id": "multiple_1", "result": "x" * 2_000})
    path.write_text('{"id": "multiple_0", "result": [{"f": 1}]}\n' + huge + "\n")
    controller = ReplayModel(tmp_path, ScoringOptions("fc", True), max_line_bytes=1_000)
    controller.preflight(["multiple"])
    packed = controller.read_state()
    assert isinstance(packed, bytes)
    path.unlink()  # the worker reads no file: it holds what the controller read
    worker = ReplayModel(tmp_path, ScoringOptions("fc", True), max_line_bytes=1_000)
    worker.take_read_state(packed)
    assert worker.records("multiple") == controller.records("multiple")
    entry = next(e for e in dataset.entries("multiple") if e.id == "multiple_1")
    assert worker.generate(Task(entry, None)).finish_reason == "response_too_large"


def test_the_worker_input_carries_what_a_replay_model_read_and_nothing_for_others(
    tmp_path, dataset
):
    from types import SimpleNamespace

    from pytest_bfcl.session.handoff import model_state_input, take_model_state

    write_oracle_results(tmp_path, dataset, "multiple")
    controller = ReplayModel(tmp_path, ScoringOptions("fc", True))
    controller.preflight(["multiple"])
    assert model_state_input(object()) == {}  # a model that reads nothing hands nothing over
    handed = model_state_input(controller)
    worker = ReplayModel(tmp_path, ScoringOptions("fc", True))
    take_model_state(SimpleNamespace(workerinput=handed), worker)  # type: ignore[arg-type]
    for result in tmp_path.rglob("*_result.json"):
        result.unlink()
    assert worker.records("multiple") == controller.records("multiple") != {}
