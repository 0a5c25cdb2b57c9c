"""The conformance tool: reading the evaluator's score files, pytest-bfcl's junit verdicts and a
result directory, pairing them, rendering the agreement, and its command line.

The full run (which builds the evaluator's virtualenv, about 1.7 GB, from the package index) is
marked ``conformance`` and runs only with ``BFCL_CONFORMANCE=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_bfcl.conformance import cli, reference
from pytest_bfcl.conformance.compare import (
    Comparison,
    compare_verdicts,
    render_comparison,
)
from pytest_bfcl.conformance.junit import JunitError, read_junit_verdicts
from pytest_bfcl.conformance.ours import pytest_command
from pytest_bfcl.conformance.reference import (
    KEY_PLACEHOLDER,
    evaluator_env,
    handler_key_names,
    prepare_project_root,
)
from pytest_bfcl.conformance.results import (
    OUTPUT_PREVIEW_CHARS,
    ResultsError,
    locate_model_dir,
    read_results,
)
from pytest_bfcl.conformance.score_files import (
    CategoryScore,
    ScoreFileError,
    error_type_of,
    parse_score_file,
    read_score_dir,
    reference_verdicts,
)
from pytest_bfcl.dataset.fetch import ensure_pinned_data

DATA = Path(__file__).parents[1] / "data" / "conformance"
RESULTS = DATA / "results"
MODEL_DIR = RESULTS / "demo-FC"
SCORES = DATA / "score" / "demo-FC"
JUNIT = DATA / "junit.xml"


def _reference() -> dict:
    stored = read_results(MODEL_DIR)
    scores = read_score_dir(SCORES)
    return {cat: reference_verdicts(scores[cat], [e.id for e in stored[cat]]) for cat in scores}


def _comparison() -> Comparison:
    stored = read_results(MODEL_DIR)
    categories, differences = compare_verdicts(stored, _reference(), read_junit_verdicts(JUNIT))
    return Comparison(
        results_dir=str(RESULTS),
        model_dir="demo-FC",
        leaderboard_model="demo-FC",
        mode="fc",
        categories=categories,
        differences=differences,
        reference_seconds=12.0,
        ours_seconds=3.0,
    )


# -- score files -------------------------------------------------------------------------------


def test_score_file_summary_and_failures_with_top_level_error_type() -> None:
    score = parse_score_file(SCORES / "non_live" / "BFCL_v4_simple_python_score.json")
    assert (score.category, score.correct_count, score.total_count) == ("simple_python", 1, 3)
    assert score.accuracy == pytest.approx(1 / 3)
    assert {i: v.error_type for i, v in score.failures.items()} == {
        "simple_python_1": "simple_function_checker:missing_required",
        "simple_python_2": "ast_decoder:decoder_wrong_output_format",
    }


def test_multi_turn_error_type_is_read_from_the_error_object() -> None:
    score = parse_score_file(SCORES / "multi_turn" / "BFCL_v4_multi_turn_base_score.json")
    assert score.failures["multi_turn_base_1"].error_type == "multi_turn:instance_state_mismatch"


def test_error_type_of_record_shapes() -> None:
    assert error_type_of({"error_type": "a:b", "error": ["x"]}) == "a:b"
    assert error_type_of({"error": {"error_type": "c:d"}}) == "c:d"
    assert error_type_of({"error": ["no type"]}) is None


def test_score_dir_reads_every_group_folder() -> None:
    assert set(read_score_dir(SCORES)) == {"simple_python", "multi_turn_base", "live_irrelevance"}


def test_entries_without_failure_record_pass() -> None:
    verdicts = _reference()["simple_python"]
    assert [(v.id, v.valid) for v in verdicts.values()] == [
        ("simple_python_0", True),
        ("simple_python_1", False),
        ("simple_python_2", False),
    ]


def test_count_mismatch_between_score_and_results_is_refused() -> None:
    score = CategoryScore(
        category="simple_python", accuracy=1.0, correct_count=2, total_count=2, failures={}
    )
    with pytest.raises(ScoreFileError, match="counts 2 entries"):
        reference_verdicts(score, ["simple_python_0"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty score file"),
        ("not json\n", "not JSON"),
        ('{"accuracy": 1.0}\n', "summary line lacks"),
        (
            '{"accuracy": 0, "correct_count": 0, "total_count": 1}\n{"valid": false}\n',
            "without an id",
        ),
    ],
)
def test_malformed_score_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "BFCL_v4_simple_python_score.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScoreFileError, match=message):
        parse_score_file(path)


# -- results and junit ---------------------------------------------------------------------------


def test_results_skip_prerequisites_and_trim_outputs() -> None:
    stored = read_results(MODEL_DIR)
    # the leaderboard's order (non-live, live, multi-turn), not the folders' alphabetical one
    assert list(stored) == ["simple_python", "live_irrelevance", "multi_turn_base"]
    long_output = stored["simple_python"][2].output
    assert len(long_output) == OUTPUT_PREVIEW_CHARS and long_output.endswith("…")
    assert json.loads(stored["simple_python"][0].output) == [
        {"calc_area": '{"base": 10, "height": 5}'}
    ]


def test_model_dir_is_found_from_root_or_given_directly(tmp_path: Path) -> None:
    assert locate_model_dir(RESULTS) == MODEL_DIR
    assert locate_model_dir(MODEL_DIR) == MODEL_DIR
    shutil.copytree(MODEL_DIR, tmp_path / "a-FC")
    shutil.copytree(MODEL_DIR, tmp_path / "b-FC")
    assert locate_model_dir(tmp_path, "b-FC") == tmp_path / "b-FC"
    with pytest.raises(ResultsError, match="several model directories"):
        locate_model_dir(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ResultsError, match="no <model dir>"):
        locate_model_dir(empty)


def test_junit_verdicts_and_not_scored_entries() -> None:
    junit = read_junit_verdicts(JUNIT)
    assert len(junit.verdicts) == 6  # the summary testcase has no bfcl_id
    assert junit.verdicts["simple_python_0"].valid is True
    assert junit.verdicts["simple_python_2"].error_type == "ast_decoder:decoder_failed"
    assert junit.not_scored["live_irrelevance_1-1-0"].reason == "no stored result"


def test_unreadable_junit_is_a_junit_error(tmp_path: Path) -> None:
    bad = tmp_path / "junit.xml"
    bad.write_text("<testsuites>", encoding="utf-8")
    with pytest.raises(JunitError, match="cannot read"):
        read_junit_verdicts(bad)


# -- comparison ---------------------------------------------------------------------------------


def test_agreement_numbers_per_category() -> None:
    cats = {cat.category: cat for cat in _comparison().categories}
    simple = cats["simple_python"]
    assert (simple.compared, simple.verdict_agree, simple.both_failed, simple.error_type_agree) == (
        3,
        3,
        2,
        1,
    )
    assert simple.verdict_agreement == 100.0 and simple.error_type_agreement == 50.0
    multi = cats["multi_turn_base"]
    assert (multi.compared, multi.verdict_agree, multi.verdict_agreement) == (2, 1, 50.0)
    assert (multi.reference_correct, multi.ours_correct) == (1, 0)
    irrelevance = cats["live_irrelevance"]
    assert (irrelevance.compared, irrelevance.not_scored_by_ours) == (1, 1)
    assert not any(cat.agrees for cat in cats.values())


def test_differences_list_each_disagreeing_entry() -> None:
    diffs = {d.id: d for d in _comparison().differences}
    assert set(diffs) == {"simple_python_2", "multi_turn_base_0", "live_irrelevance_1-1-0"}
    assert (
        diffs["simple_python_2"].reference_error_type == "ast_decoder:decoder_wrong_output_format"
    )
    assert diffs["simple_python_2"].ours_error_type == "ast_decoder:decoder_failed"
    assert (diffs["multi_turn_base_0"].reference_valid, diffs["multi_turn_base_0"].ours_valid) == (
        True,
        False,
    )
    assert diffs["live_irrelevance_1-1-0"].ours_valid is None
    assert "no stored result" in diffs["live_irrelevance_1-1-0"].note


def test_full_agreement_when_ours_matches_the_reference() -> None:
    stored = read_results(MODEL_DIR)
    reference = _reference()
    junit = read_junit_verdicts(JUNIT)
    junit.verdicts.update({v.id: v for cat in reference.values() for v in cat.values()})
    junit.not_scored.clear()
    categories, differences = compare_verdicts(stored, reference, junit)
    comparison = _comparison().model_copy(
        update={"categories": categories, "differences": differences}
    )
    assert differences == [] and comparison.agrees
    assert render_comparison(comparison).endswith("AGREE")


def test_category_without_score_file_is_reported_not_compared() -> None:
    stored = read_results(MODEL_DIR)
    reference = _reference()
    del reference["multi_turn_base"]
    categories, _ = compare_verdicts(
        stored,
        reference,
        read_junit_verdicts(JUNIT),
        {"multi_turn_base": "the evaluator failed: boom"},
    )
    multi = next(cat for cat in categories if cat.category == "multi_turn_base")
    assert (multi.compared, multi.problem, multi.agrees) == (0, "the evaluator failed: boom", False)


def test_rendered_report_and_json() -> None:
    comparison = _comparison()
    text = render_comparison(comparison)
    assert "simple_python" in text and "50.00%" in text
    assert "- simple_python_2: evaluator fail (ast_decoder:decoder_wrong_output_format); " in text
    assert "pytest-bfcl fail (ast_decoder:decoder_failed)" in text
    assert "pytest-bfcl not scored" in text
    assert "time: evaluator 12 s, pytest-bfcl 3 s" in text
    assert text.endswith("DIFFER")
    data = comparison.as_json()
    assert data["agrees"] is False
    assert data["total"]["compared"] == 6 and data["total"]["verdict_agree"] == 5
    assert data["categories"][0]["verdict_agreement"] is not None
    json.dumps(data)  # serialisable as written by --json


# -- the runs' plumbing ---------------------------------------------------------------------------


def test_project_root_gets_the_results_under_the_registry_dir_name(tmp_path: Path) -> None:
    target = prepare_project_root(tmp_path, MODEL_DIR, "org_model-FC")
    assert target == tmp_path / "result" / "org_model-FC"
    assert (target / "non_live" / "BFCL_v4_simple_python_result.json").is_file()
    assert (tmp_path / "score").is_dir()


def test_evaluator_env_holds_placeholders_not_the_users_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    env = evaluator_env(tmp_path, ["OPENAI_API_KEY"])
    assert env["BFCL_PROJECT_ROOT"] == str(tmp_path)
    assert env["OPENAI_API_KEY"] == KEY_PLACEHOLDER
    assert "PYTHONPATH" not in env and "sk-real-secret" not in env.values()
    assert env["PATH"] == os.environ["PATH"]


def test_handler_key_names_are_read_from_the_sources(tmp_path: Path) -> None:
    handlers = tmp_path / "bfcl_eval" / "model_handler" / "api"
    handlers.mkdir(parents=True)
    (handlers / "a.py").write_text(
        "import os\n"
        "c = Client(api_key=os.getenv('ALPHA_API_KEY'))\n"
        "u = os.environ.get('ALPHA_BASE_URL')\n"
        "k = os.environ['BETA_API_KEY']\n",
        encoding="utf-8",
    )
    assert handler_key_names(tmp_path) == ("ALPHA_API_KEY", "BETA_API_KEY")


def test_pinned_release_handlers_need_the_openai_key() -> None:
    root = ensure_pinned_data().unpacked_root
    assert root is not None
    names = handler_key_names(root)
    assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MISTRAL_API_KEY"} <= set(names)


def test_pytest_command_replays_the_model_dir(tmp_path: Path) -> None:
    cmd = pytest_command(
        MODEL_DIR, "prompt", ["simple_python", "live_irrelevance"], tmp_path, False
    )
    assert f"--bfcl-model=replay:{MODEL_DIR}" in cmd
    assert "--bfcl-mode=prompt" in cmd and "--bfcl-underscore-to-dot=false" in cmd
    assert "--bfcl-category=simple_python,live_irrelevance" in cmd
    assert cmd[cmd.index("-p") + 1] == "no:cacheprovider"


# -- the command line --------------------------------------------------------------------------


def test_cli_missing_directory_is_a_one_line_setup_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["/nonexistent/results"]) == cli.EXIT_SETUP
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a directory" in err and "Traceback" not in err


def test_cli_unknown_model_names_closest_matches(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(RESULTS), "--leaderboard-model", "gpt-4.1-2025-04-14-fc"]) == 2
    err = capsys.readouterr().err
    assert "unknown leaderboard model" in err and "gpt-4.1-2025-04-14-FC" in err


def test_cli_unregistered_model_dir_is_a_setup_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(MODEL_DIR)]) == cli.EXIT_SETUP
    assert "unknown leaderboard model 'demo-FC'" in capsys.readouterr().err


def test_cli_unknown_category_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(MODEL_DIR, tmp_path / "gpt-4.1-2025-04-14-FC")
    code = cli.main([str(tmp_path), "--categories", "simple_python,simple_java"])
    assert code == cli.EXIT_SETUP
    assert "no result file for simple_java" in capsys.readouterr().err


def test_cli_refuses_format_sensitivity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(MODEL_DIR, tmp_path / "gpt-4.1-2025-04-14-FC")
    assert cli.main([str(tmp_path), "--categories", "format_sensitivity"]) == cli.EXIT_SETUP
    assert "format_sensitivity is not compared" in capsys.readouterr().err


def test_cli_refuses_a_non_empty_keep_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x").write_text("", encoding="utf-8")
    assert cli.main([str(RESULTS), "--keep", str(tmp_path)]) == cli.EXIT_SETUP
    assert "not empty" in capsys.readouterr().err


@pytest.fixture()
def stub_runs(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, object]]:
    """Both runs replaced by the fixture's files; what each was asked is recorded."""
    from pytest_bfcl.conformance.ours import OursRun
    from pytest_bfcl.conformance.reference import ReferenceRun

    calls: dict[str, dict[str, object]] = {}

    def fake_reference(python, project_root, model_dir, model_name, categories, timeout, keys):
        calls["reference"] = {"model_dir": model_dir.name, "model_name": model_name}
        return ReferenceRun(score_dir=SCORES, returncode=0, seconds=1.0, log_tail="")

    def fake_ours(model_dir, mode, categories, workdir, underscore_to_dot, timeout):
        calls["ours"] = {"mode": mode, "underscore_to_dot": underscore_to_dot}
        verdicts = read_junit_verdicts(JUNIT)
        return OursRun(verdicts=verdicts, junit_path=JUNIT, report_path=JUNIT, seconds=2.0)

    monkeypatch.setattr(cli, "ensure_venv", lambda venv, pip_args, say: Path(sys.executable))
    monkeypatch.setattr(cli, "run_reference", fake_reference)
    monkeypatch.setattr(cli, "run_ours", fake_ours)
    return calls


def test_cli_compares_with_stubbed_runs(
    tmp_path: Path, stub_runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    """The wiring of the command line: the registry's mode and name flags reach both runs."""
    results = tmp_path / "results"
    shutil.copytree(MODEL_DIR, results / "gpt-4.1-2025-04-14-FC")
    out_json = tmp_path / "cmp.json"
    assert cli.main([str(results), "--json", str(out_json)]) == cli.EXIT_DIFFER
    assert stub_runs["reference"] == {
        "model_dir": "gpt-4.1-2025-04-14-FC",
        "model_name": "gpt-4.1-2025-04-14-FC",
    }
    assert stub_runs["ours"] == {"mode": "fc", "underscore_to_dot": True}
    text = capsys.readouterr().out
    assert "leaderboard model: gpt-4.1-2025-04-14-FC" in text and "3 differing entries" in text
    assert json.loads(out_json.read_text())["total"]["compared"] == 6


def test_cli_evaluates_any_dir_as_the_named_leaderboard_model(
    tmp_path: Path, stub_runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(MODEL_DIR, tmp_path / "my-checkpoint")
    code = cli.main([str(tmp_path), "--leaderboard-model", "Qwen/Qwen3-8B-FC"])
    assert code == cli.EXIT_DIFFER
    assert stub_runs["reference"] == {
        "model_dir": "my-checkpoint",
        "model_name": "Qwen/Qwen3-8B-FC",
    }
    assert stub_runs["ours"] == {"mode": "fc", "underscore_to_dot": False}


def test_cli_mode_other_than_the_registrys_is_warned_about(
    tmp_path: Path, stub_runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(MODEL_DIR, tmp_path / "gpt-4.1-2025-04-14-FC")
    cli.main([str(tmp_path), "--mode", "prompt"])
    assert stub_runs["ours"]["mode"] == "prompt"
    err = capsys.readouterr().err
    assert "decodes gpt-4.1-2025-04-14-FC's output in fc mode, pytest-bfcl in prompt" in err


def test_cli_follows_how_the_evaluator_decodes(
    tmp_path: Path, stub_runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    # registered as fc, decoded as text by the local-model base class
    shutil.copytree(MODEL_DIR, tmp_path / "run")
    cli.main([str(tmp_path), "--leaderboard-model", "meta-llama/Llama-3.2-1B-Instruct-FC"])
    assert stub_runs["ours"]["mode"] == "prompt"
    assert "warning" not in capsys.readouterr().err


def test_cli_warns_about_a_model_specific_decoder(
    tmp_path: Path, stub_runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(MODEL_DIR, tmp_path / "run")
    cli.main([str(tmp_path), "--leaderboard-model", "Qwen/Qwen3-8B-FC"])
    assert "with its own decoder (QwenFCHandler)" in capsys.readouterr().err


# -- the real thing (opt-in) -------------------------------------------------------------------

SHARED = Path(os.environ.get("BFCL_SHARED_DIR", Path(__file__).parents[3] / "shared"))
CORPUS_V0 = SHARED / "reference" / "corpus" / "v0"


@pytest.mark.conformance
@pytest.mark.skipif(
    os.environ.get("BFCL_CONFORMANCE") != "1",
    reason="builds the official evaluator's virtualenv; set BFCL_CONFORMANCE=1",
)
@pytest.mark.skipif(not CORPUS_V0.is_dir(), reason="shared reference corpus not found")
def test_official_evaluator_agrees_on_the_shared_corpus(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_bfcl.conformance",
            str(CORPUS_V0),
            "--categories",
            "simple_python,live_irrelevance,multi_turn_base",
            "--json",
            str(out),
            *[
                f"--pip-arg={arg}"
                for arg in os.environ.get("BFCL_CONFORMANCE_PIP_ARGS", "").split()
            ],
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    total = json.loads(out.read_text())["total"]
    assert total["compared"] == 400 + 884 + 200
    assert total["verdict_agree"] == total["compared"]


# -- the evaluator's virtualenv (build and start-up check stubbed) ----------------------------


def _fake_venv(tmp_path: Path) -> Path:
    python = reference.venv_python(tmp_path / "venv")
    python.parent.mkdir(parents=True)
    python.write_text("", encoding="utf-8")
    return tmp_path / "venv"


def test_complete_venv_is_reused_without_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = _fake_venv(tmp_path)
    (venv / ".pytest-bfcl-conformance").write_text("2026.3.23", encoding="utf-8")
    monkeypatch.setattr(reference, "startup_problem", lambda python: pytest.fail("checked"))
    monkeypatch.setattr(reference, "build_venv", lambda *a: pytest.fail("rebuilt"))
    assert reference.ensure_venv(venv) == reference.venv_python(venv)


def test_working_venv_without_marker_is_adopted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = _fake_venv(tmp_path)
    monkeypatch.setattr(reference, "startup_problem", lambda python: None)
    monkeypatch.setattr(reference, "build_venv", lambda *a: pytest.fail("rebuilt"))
    reference.ensure_venv(venv)
    assert (venv / ".pytest-bfcl-conformance").is_file()


def test_venv_that_does_not_start_after_a_build_names_the_missing_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "venv"
    built: list[tuple[Path, tuple[str, ...]]] = []
    messages: list[str] = []
    monkeypatch.setattr(
        reference, "startup_problem", lambda python: "ModuleNotFoundError: No module named 'xyz'"
    )
    monkeypatch.setattr(reference, "build_venv", lambda v, args: built.append((v, tuple(args))))
    with pytest.raises(reference.SetupError, match="--pip-arg xyz"):
        reference.ensure_venv(venv, ["torch==2.13.0"], messages.append)
    assert built == [(venv, ("torch==2.13.0",))]
    assert "building the official evaluator's virtualenv" in messages[0]
    assert not (venv / ".pytest-bfcl-conformance").exists()
