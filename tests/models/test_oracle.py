"""The oracle answers with the ground truth through the real decoders and checkers; it must
fail exactly the entries documented in data/oracle_known_failures.json, in both modes."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.dataset.categories import SINGLE_TURN, category_of_id
from pytest_bfcl.decode import decode_fc_ast
from pytest_bfcl.models.base import Generation, Task
from pytest_bfcl.models.encode import ground_truth_calls, placeholder_call
from pytest_bfcl.models.oracle import OracleModel
from pytest_bfcl.resources import project_json
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.settings import Settings


@pytest.mark.parametrize(
    ("mode", "categories"),
    [("fc", list(SINGLE_TURN)), ("prompt", [*SINGLE_TURN, "format_sensitivity"])],
)
def test_oracle_fails_exactly_the_documented_entries(dataset, mode, categories):
    settings = Settings(model="oracle", mode=mode, categories=categories)
    run = BfclRun(settings, dataset, OracleModel(ScoringOptions(mode, mode == "fc")))
    failed = set()
    for category in categories:
        for entry in dataset.entries(category):
            generation = run.generate(entry.id)
            assert isinstance(generation, Generation)
            if not run.score(generation).valid:
                failed.add(entry.id)
    known = project_json("oracle_known_failures.json")[mode]
    # (the executable categories' known failures are checked by tests/check/test_executable.py)
    known = {k: v for k, v in known.items() if category_of_id(k) in categories}
    assert failed == set(known)
    assert all(run.expected_failure(entry_id) for entry_id in known)


def test_ground_truth_calls_take_the_first_acceptable_value():
    expected = [
        {"f": {"a": ["", 1], "b": [""], "c": [{"k": ["x", "y"], "o": [""]}], "d": [[{"z": [1]}]]}}
    ]
    assert ground_truth_calls(expected) == [{"f": {"a": 1, "c": {"k": "x"}, "d": [{"z": 1}]}}]


def test_fc_output_uses_underscored_names_and_json_arguments(dataset):
    entry = dataset.entries("simple_python")[0]
    answer = dataset.answers("simple_python")[entry.id]
    result = OracleModel(ScoringOptions("fc", True)).generate(Task(entry, answer)).result
    decoded = decode_fc_ast(result)
    assert [next(iter(c)) for c in decoded] == [entry.function[0].name.replace(".", "_")]
    assert json.loads(next(iter(result[0].values()))) == next(iter(decoded[0].values()))


def test_relevance_placeholder_fills_required_parameters(dataset):
    for entry in dataset.entries("live_relevance"):
        call = placeholder_call(entry.function[0])
        args = call[entry.function[0].name]
        assert set(args) == set(entry.function[0].parameters.required)
