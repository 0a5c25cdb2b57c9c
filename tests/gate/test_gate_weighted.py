"""The gate tests what it prints: a group's comparison is the permutation test of the
leaderboard-weighted score difference its row shows (checked against brute-force enumeration),
and a merged baseline of many samples against a one-sample run keeps the false-alarm rate
(fixed-seed simulation)."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from pytest_bfcl.gate import permutation
from pytest_bfcl.gate.decision import GateSettings, compare
from pytest_bfcl.gate.permutation import Stratum, permutation_test


def _by_name(gate):
    return {c.name: c for c in gate.comparisons}


def test_a_groups_p_value_is_the_weighted_tests_checked_by_enumeration():
    # Irrelevance = mean(irrelevance, live_irrelevance): an entry of a 4-entry category weighs
    # 1/8, one of a 6-entry category 1/12.
    baseline = {f"irrelevance_{i}": v for i, v in enumerate([1, 1, 1, 0])}
    current = {f"irrelevance_{i}": v for i, v in enumerate([0, 0, 1, 1])}
    baseline |= {f"live_irrelevance_{i}": v for i, v in enumerate([1, 0, 1, 1, 1, 0])}
    current |= {f"live_irrelevance_{i}": v for i, v in enumerate([0, 1, 1, 1, 1, 0])}
    gate = compare(
        {i: bool(v) for i, v in current.items()},
        {i: bool(v) for i, v in baseline.items()},
        GateSettings(),
    )
    group = _by_name(gate)["irrelevance_detection"]
    # the printed difference is the weighted one
    weights = {"irrelevance": Fraction(1, 8), "live_irrelevance": Fraction(1, 12)}
    flips = [
        (weights[i.rsplit("_", 1)[0]], baseline[i] - current[i])
        for i in baseline
        if baseline[i] != current[i]
    ]
    observed = sum(w * d for w, d in flips)
    assert group.drop_points == pytest.approx(float(observed) * 100)
    outcomes = [
        sum(w * abs(d) * s for (w, d), s in zip(flips, signs, strict=True))
        for signs in itertools.product((1, -1), repeat=len(flips))
    ]
    exact = sum(1 for o in outcomes if o >= observed) / len(outcomes)
    slack = 2 * 2 * sum(w for w, _ in flips) / permutation.GRID_POINTS
    shifted = sum(1 for o in outcomes if o >= observed - Fraction(slack)) / len(outcomes)
    assert exact - 1e-12 <= group.p_value <= shifted + 1e-9
    assert exact == pytest.approx(13 / 32)  # the unweighted 3 worse of 5 would be 16 / 32


def _noisy_pair(sizes: dict[str, int], flip: float, seed: int):
    """Baseline and current verdicts of an unchanged model: a share ``flip`` of each
    category's entries flip, each way equally often."""
    rng = random.Random(seed)
    baseline, current = {}, {}
    for name, size in sizes.items():
        for i in range(size):
            entry = f"{name}_{i}"
            ok = rng.random() < 0.8
            baseline[entry] = current[entry] = ok
            if rng.random() < flip:
                baseline[entry], current[entry] = rng.random() < 0.5, rng.random() < 0.5
    return baseline, current


NON_LIVE = {
    "simple_python": 400,
    "simple_java": 100,
    "simple_javascript": 50,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
}


def _lose(verdicts: dict[str, bool], category: str, count: int) -> dict[str, bool]:
    lost = dict(verdicts)
    passing = [i for i, ok in verdicts.items() if ok and i.rsplit("_", 1)[0] == category]
    for entry in passing[:count]:
        lost[entry] = False
    return lost


def _unweighted_p_value(current: dict[str, bool], baseline: dict[str, bool]) -> float:
    """What the gate tested before: every entry of the group weighing the same."""
    pairs = [((int(baseline[i]), 1), (int(current[i]), 1)) for i in baseline]
    return permutation_test([Stratum(1 / len(pairs), pairs)]).p_value


def test_losses_in_light_entries_move_the_group_little_and_are_not_significant():
    baseline, current = _noisy_pair(NON_LIVE, flip=0.1, seed=0)
    lost = _lose(current, "simple_python", 24)  # 24 of 400: 0.5 points of Non-Live
    non_live = _by_name(compare(lost, baseline, GateSettings()))["non_live"]
    unchanged = _by_name(compare(current, baseline, GateSettings()))["non_live"]
    assert non_live.drop_points - unchanged.drop_points == pytest.approx(24 / 400 / 12 * 100)
    assert non_live.p_value > 0.1 and not non_live.failed
    assert _unweighted_p_value(lost, baseline) < 0.05  # the unweighted test said "significant"


def test_losses_in_heavy_entries_fail_the_group_they_move():
    baseline, current = _noisy_pair(NON_LIVE, flip=0.1, seed=0)
    # 15 of 100 simple_java and 8 of 50 simple_javascript entries: 2.6 points of Non-Live
    lost = _lose(_lose(current, "simple_java", 15), "simple_javascript", 8)
    non_live = _by_name(compare(lost, baseline, GateSettings()))["non_live"]
    unchanged = _by_name(compare(current, baseline, GateSettings()))["non_live"]
    assert non_live.drop_points - unchanged.drop_points == pytest.approx(
        (15 / 100 + 8 / 50) / 12 * 100
    )
    assert non_live.failed
    assert non_live.p_value < _unweighted_p_value(lost, baseline) / 3


@pytest.mark.parametrize(("baseline_samples", "current_samples"), [(10, 1), (1, 5), (3, 1)])
def test_a_merged_baseline_against_a_one_sample_run_keeps_the_level(
    baseline_samples, current_samples
):
    """A weak model (half its entries pass 3-25 % of the time): the category's one-sided
    p-value falls at or below 0.05 in at most 5 % of fixed-seed pairs of runs (2 standard
    errors allowed); the sign flip of pass-rate differences it replaces rejected in 9 % (10
    against 1) and 7 % (3 against 1) of these pairs."""
    rng = random.Random(f"weak:{baseline_samples}:{current_samples}")
    chances = [rng.uniform(0.03, 0.25) if rng.random() < 0.5 else 1.0 for _ in range(60)]
    reps, rejected = 600, 0
    for _ in range(reps):

        def run(samples: int) -> dict[str, tuple[int, int]]:
            return {
                f"simple_python_{i}": (sum(rng.random() < p for _ in range(samples)), samples)
                for i, p in enumerate(chances)
            }

        gate = compare(run(current_samples), run(baseline_samples), GateSettings())
        rejected += _by_name(gate)["simple_python"].p_value <= 0.05
    assert rejected / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
