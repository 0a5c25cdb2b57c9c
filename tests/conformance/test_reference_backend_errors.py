"""Every badly formed call of every multi-turn and memory (kv, rec_sum) backend function,
answered by pytest-bfcl's
backends and by the official executor in the evaluator's virtualenv: the answers (error texts
included) are identical. Opt-in (``BFCL_CONFORMANCE=1``): it builds that virtualenv, unless
``BFCL_REFERENCE_PYTHON`` names a Python that has the pinned ``bfcl-eval`` installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_bfcl.conformance import reference
from pytest_bfcl.conformance.backend_errors import (
    differences,
    ground_truth_cases,
    memory_cases,
    our_answers_pinned,
    probe_cases,
    reference_answers,
    scenario_configs,
)

MULTI_TURN = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)


@pytest.mark.conformance
@pytest.mark.skipif(
    os.environ.get("BFCL_CONFORMANCE") != "1",
    reason="runs the official executor in its virtualenv; set BFCL_CONFORMANCE=1",
)
def test_backends_answer_badly_formed_calls_as_the_reference_does(dataset):
    given = os.environ.get("BFCL_REFERENCE_PYTHON")
    python = Path(given) if given else reference.ensure_venv()
    cases = probe_cases(scenario_configs(dataset.entries("multi_turn_base"))) + memory_cases()
    for category in MULTI_TURN:
        cases += ground_truth_cases(
            dataset.entries(category), dataset.answers(category), per_method=10**6
        )
    assert len(cases) > 59_000
    found = differences(cases, our_answers_pinned(cases), reference_answers(python, cases))
    shown = "\n".join(
        f"{d.case.call}\n  ours: {d.ours}\n  reference: {d.reference}" for d in found[:20]
    )
    assert not found, f"{len(found)} of {len(cases)} calls answered differently:\n{shown}"
