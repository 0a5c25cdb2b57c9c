"""The gate's promises, by simulation (run with ``pytest benchmarks``; not part of the test suite;
``python benchmarks/gate_power.py`` prints the README's table with more repetitions).

- An unchanged model whose entries are 10 % flaky fails the default gate in at most alpha of
  pairs of runs, for a full run, a 10 % sample and three samples per entry (the figure is
  allowed the binomial noise of the repetitions: at most alpha + 2 standard errors).
- A drop of the size the gate states it can detect is caught in about 80 % of runs (at least
  65 %, the simulation's own noise allowed for) for the overall score and a mid-sized category.
- The sequential gate (``--bfcl-sequential``) on the single-turn and multi-turn categories: an
  unchanged model fails it in at most alpha of runs, each of its failures is a failure of the
  ordinary gate on its last stage (the argument of docs/gate-statistics.md), and it asks on
  average at most 30 % of the full selection's queries (with the simulation's noise allowed).
"""

from __future__ import annotations

import math

import pytest
from gate_power import (
    Model,
    category_sizes,
    pull_request_model,
    sequential_outcome,
    simulate,
    staged_runs,
)

from pytest_bfcl.gate.decision import GateSettings

REPS = 120
SETTINGS = GateSettings()


@pytest.mark.parametrize(("fraction", "samples"), [(None, 1), (0.1, 1), (None, 3)])
def test_unchanged_model_fails_in_at_most_alpha_of_runs(fraction, samples):
    model = Model.draw(category_sizes(fraction), flaky=0.1, seed=11)
    outcome, _ = simulate(model, model, samples, REPS, seed=5, settings=SETTINGS)
    allowance = 2 * math.sqrt(SETTINGS.alpha * (1 - SETTINGS.alpha) / REPS)
    assert outcome.rate <= SETTINGS.alpha + allowance
    if fraction is None:  # what the correction buys over 30 comparisons of a full run
        # (on a small sample the weighted one-sided tests and the plain two-sided McNemar
        # reject on different runs, so neither count bounds the other)
        assert outcome.failed_uncorrected > outcome.failed


@pytest.mark.parametrize("watch", ["overall", "simple_python"])
def test_stated_detectable_drop_is_caught_about_80_percent_of_the_time(watch):
    model = Model.draw(category_sizes(), flaky=0.1, seed=12)
    _, stated = simulate(model, model, 1, 10, seed=6, settings=SETTINGS, watch=watch)
    drops = sorted(d for d in stated if d is not None)
    drop = drops[len(drops) // 2]
    regressed = model.regressed(watch, drop, seed=12)
    caught, _ = simulate(model, regressed, 1, 60, seed=7, settings=SETTINGS)
    assert caught.rate >= 0.65


SEQUENTIAL_REPS = 60


def test_the_sequential_gate_keeps_false_alarms_within_alpha_and_asks_little():
    model = pull_request_model(flaky=0.1, seed=13)
    runs = staged_runs(model, model, SEQUENTIAL_REPS, seed=8, settings=SETTINGS)
    outcome = sequential_outcome(runs)
    allowance = 2 * math.sqrt(SETTINGS.alpha * (1 - SETTINGS.alpha) / SEQUENTIAL_REPS)
    assert outcome.rate <= SETTINGS.alpha + allowance
    # it fails only where the ordinary gate on the last stage's entries fails
    failed = [
        n == len(r.failed) and r.failed[-1] for r, n in zip(runs, outcome.stopped, strict=True)
    ]
    assert outcome.failed == sum(failed) <= sum(r.failed[-1] for r in runs)
    assert outcome.stopped.count(1) > SEQUENTIAL_REPS / 3  # most runs stop early
    assert outcome.mean_share <= 0.30 + 0.05
