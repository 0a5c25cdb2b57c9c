"""Function-calling mode sends the function names it scores: with the function-name convention
on, dots become underscores and the checker maps them back; with it off, the names go out as
the docs write them. A server answering with the names it was shown scores the same either
way, and the oracle answers with the names the tools show."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.models.base import Task
from pytest_bfcl.models.function_docs import to_openai_tools
from pytest_bfcl.models.oracle import OracleModel
from pytest_bfcl.scoring import ScoringOptions
from pytest_bfcl.testing.entry_match import named_as_shown
from pytest_bfcl.testing.fake_openai import FakeOpenAI

CATEGORIES = "simple_python,multiple"


def _dotted_entries(dataset):
    return [
        e for c in CATEGORIES.split(",") for e in dataset.entries(c) if "." in e.function[0].name
    ]


@pytest.mark.parametrize("convention", [True, False])
def test_the_oracle_answers_with_the_names_its_tools_show(dataset, texts, convention):
    entries = _dotted_entries(dataset)
    assert len(entries) > 50
    oracle = OracleModel(ScoringOptions("fc", convention))
    answers = dataset.answers("simple_python") | dataset.answers("multiple")
    for entry in entries:
        shown = {
            t["function"]["name"]
            for t in to_openai_tools(entry.function_sources(), texts, convention)
        }
        result = oracle.generate(Task(entry, answers[entry.id])).result
        assert all(next(iter(call)) in shown for call in result), entry.id


def test_fake_server_renames_calls_as_the_request_shows_them():
    calls = [{"math.gcd": "{}"}, {"other": "{}"}]
    underscored = {"tools": [{"type": "function", "function": {"name": "math_gcd"}}]}
    dotted = {"tools": [{"type": "function", "function": {"name": "math.gcd"}}]}
    assert named_as_shown(calls, underscored) == [{"math_gcd": "{}"}, {"other": "{}"}]
    assert named_as_shown(calls, dotted) == calls


def _run(pytester, fake, data_source, tmp_path, *extra):
    report = tmp_path / f"report{len(extra)}.json"
    result = pytester.runpytest_subprocess(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={fake.base_url}",
        f"--bfcl-category={CATEGORIES}",
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-no-cache",
        f"--bfcl-report={report}",
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=no",
        *extra,
    )
    categories = json.loads(report.read_text())["categories"]
    return result, {name: categories[name]["correct"] for name in CATEGORIES.split(",")}


def test_a_server_answering_with_the_names_shown_scores_the_same_either_way(
    pytester, dataset, data_source, tmp_path
):
    with FakeOpenAI(dataset, CATEGORIES.split(",")) as fake:
        _, on = _run(pytester, fake, data_source, tmp_path)
        _, off = _run(pytester, fake, data_source, tmp_path, "--bfcl-underscore-to-dot=false")
    assert on == off
    assert on == {"simple_python": 400, "multiple": 200}
