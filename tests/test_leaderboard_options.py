"""Options that reproduce a leaderboard entry's scoring: the function-name convention and the
leaderboard's partial evaluation."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]


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
