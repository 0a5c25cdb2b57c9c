"""Options that reproduce a leaderboard entry's scoring: the function-name convention and the
leaderboard's partial evaluation."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def dotted(dataset, tmp_path):
    """Replay results answering every dotted-name simple_python entry with its ground truth,
    the function named as written in the docs (with its dots)."""
    answers = dataset.answers("simple_python")
    lines = []
    for entry in dataset.entries("simple_python"):
        truth = answers[entry.id].ground_truth[0]
        name, params = next(iter(truth.items()))
        if "." not in name:
            continue
        args = {k: v[0] for k, v in params.items() if v and v[0] != ""}
        lines.append(json.dumps({"id": entry.id, "result": [{name: json.dumps(args)}]}))
    path = tmp_path / "r" / "non_live" / "BFCL_v4_simple_python_result.json"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    return tmp_path / "r", len(lines)


def test_dotted_names_follow_the_underscore_to_dot_setting(pytester, data_source, dotted):
    root, count = dotted
    assert count > 20
    common = [f"--bfcl-model=replay:{root}", "--bfcl-category=simple_python",
              f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider", "-q"]  # fmt: skip
    default = pytester.runpytest(*common)
    assert default.parseoutcomes()["failed"] >= count - 2
    assert "simple_function_checker:wrong_func_name" in default.stdout.str()
    off = pytester.runpytest(*common, "--bfcl-underscore-to-dot=false")
    assert off.parseoutcomes().get("failed", 0) <= 2  # the ground truth's own data errors
    assert off.parseoutcomes()["passed"] >= count - 2


def test_leaderboard_model_sets_mode_and_name_convention(pytester, data_source, dotted, tmp_path):
    root, count = dotted
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        f"--bfcl-model=replay:{root}", "--bfcl-category=simple_python",
        "--bfcl-leaderboard-model=qwen3-235b-a22b-instruct-2507-FC", f"--bfcl-report={report}",
        f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider", "-q",
    )  # fmt: skip
    assert result.parseoutcomes()["passed"] >= count - 2  # dotted names, as registered
    meta = json.loads(report.read_text())["metadata"]
    assert meta["mode"] == "fc" and meta["underscore_to_dot"] is False
    assert "scored as the leaderboard scores qwen3-235b-a22b-instruct-2507-FC" in (
        result.stdout.str()
    )


def test_an_unknown_leaderboard_model_names_the_closest(pytester, data_source):
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-leaderboard-model=gpt-4.1-2025-04-14-fc",
        f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "gpt-4.1-2025-04-14-FC" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_an_explicit_option_wins_over_the_registry(data_source):
    from pytest_bfcl.run.leaderboard import as_leaderboard_scores
    from pytest_bfcl.settings import build_settings

    settings = build_settings({"model": "oracle", "leaderboard_model": "firefunction-v2-FC",
                               "underscore_to_dot": "true"})  # fmt: skip
    applied = as_leaderboard_scores(settings, data_source)
    assert applied.mode == "fc" and applied.underscore_to_dot is True
    default = as_leaderboard_scores(
        build_settings({"model": "oracle", "leaderboard_model": "firefunction-v2-FC"}),
        data_source,
    )
    assert default.underscore_to_dot is False
    prompting = as_leaderboard_scores(
        build_settings({"model": "oracle", "leaderboard_model": "gpt-5-mini-2025-08-07"}),
        data_source,
    )
    assert prompting.mode == "prompt" and prompting.underscore_to_dot is False
