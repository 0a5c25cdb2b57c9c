"""The gate's promises, by simulation (run with ``pytest benchmarks``; not part of the test suite;
``python benchmarks/gate_power.py`` prints the README's table with more repetitions).

- An unchanged model whose entries are 10 % flaky fails the default gate in at most alpha of
  pairs of runs, for a full run, a 10 % sample and three samples per entry (the figure is
  allowed the binomial noise of the repetitions: at most alpha + 2 standard errors).
- A drop of the size the gate states it can detect is caught in about 80 % of runs (at least
  65 %, the simulation's own noise allowed for) for the overall score and a mid-sized category.
- The sequential gate (``--bfcl-sequential``) on the single-turn and multi-turn categories: an
  unchanged model fails it in at most alpha of runs (the noise allowed) and asks on average at
  most half the full selection's queries; a uniform 3-point drop is blocked in 90 % of runs or
  more, for less than a full run's queries.
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


SEQUENTIAL_REPS = 40


def test_the_sequential_gate_keeps_false_alarms_within_alpha_and_asks_at_most_half():
    model = pull_request_model(flaky=0.1, seed=13)
    outcome = sequential_outcome(model, model, SEQUENTIAL_REPS, seed=8, settings=SETTINGS)
    allowance = 2 * math.sqrt(SETTINGS.alpha * (1 - SETTINGS.alpha) / SEQUENTIAL_REPS)
    assert outcome.rate <= SETTINGS.alpha + allowance
    assert outcome.mean_share <= 0.50


def test_the_sequential_gate_blocks_a_uniform_drop():
    model = pull_request_model(flaky=0.1, seed=13)
    regressed = model.regressed("overall", 3.0, 13)
    outcome = sequential_outcome(model, regressed, 20, seed=9, settings=SETTINGS)
    assert outcome.rate >= 0.9 and outcome.mean_share < 1.0
