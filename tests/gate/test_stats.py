"""The gate's statistics against known values: exact binomial and McNemar figures, Holm's procedure and Tarone's rule, interval
coverage by simulation (fixed seeds), and the detectable drop."""

from __future__ import annotations

import math
import random

import pytest

from pytest_bfcl.gate.decision import GateSettings, compare
from pytest_bfcl.gate.stats import (
    binomial_two_sided,
    detectable_drop,
    effective_entries,
    entries_to_detect,
    holm_tarone,
    mcnemar_exact,
    noise_from_rates,
    noise_of_pairs,
    tarone_count,
)
from pytest_bfcl.scores.intervals import mean_interval


def test_exact_binomial_and_mcnemar_known_values():
    assert binomial_two_sided(0, 0) == 1.0
    assert binomial_two_sided(2, 10) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(2, 0) == 0.5
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(10, 2) == pytest.approx(0.03857421875)
    assert mcnemar_exact(40, 0) == pytest.approx(2 * 0.5**40)


def test_holm_step_down_known_example():
    # sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, then 0.03 > 0.05/2: stop
    rejected, levels = holm_tarone([0.01, 0.04, 0.03, 0.005], [1e-9] * 4, 0.05)
    assert rejected == [True, False, False, True]
    assert levels[3] == pytest.approx(0.05 / 4) and levels[0] == pytest.approx(0.05 / 3)
    assert levels[2] == levels[1] == pytest.approx(0.05 / 2)


def test_tarone_leaves_out_comparisons_that_cannot_reach_significance():
    # two comparisons of a few discordant pairs can never reach 0.05: they cost nothing
    smallest = [1e-9, 0.25, 0.25]
    assert tarone_count(smallest, 0.05) == 1
    rejected, _ = holm_tarone([0.02, 0.5, 0.5], smallest, 0.05)
    assert rejected == [True, False, False]
    plain, _ = holm_tarone([0.02, 0.5, 0.5], [1e-9] * 3, 0.05)  # Holm alone: 0.02 > 0.05/3
    assert plain == [False, False, False]


def _coverage(samples: int, seed: int, reps: int = 600, entries: int = 150) -> float:
    """Share of intervals covering the mean pass probability of a population of entries:
    70 % always pass, 10 % never, 20 % flaky with chance uniform in 0.2-0.8 (mean 0.8)."""
    rng = random.Random(seed)
    covered = 0
    for _ in range(reps):
        rates = []
        for _ in range(entries):
            kind = rng.random()
            chance = 1.0 if kind < 0.7 else 0.0 if kind < 0.8 else rng.uniform(0.2, 0.8)
            passes = sum(rng.random() < chance for _ in range(samples))
            rates.append(passes / samples)
        low, high = mean_interval(rates, samples)
        covered += low <= 0.8 <= high
    return covered / reps


@pytest.mark.parametrize("samples", [1, 3, 5])
def test_mean_interval_covers_95_percent_by_simulation(samples):
    coverage = _coverage(samples, seed=20261125 + samples)
    assert 0.925 <= coverage <= 0.975


def test_mean_interval_narrows_with_samples_of_flaky_entries():
    rng = random.Random(3)
    one = [float(rng.random() < 0.5) for _ in range(200)]
    many = [sum(rng.random() < 0.5 for _ in range(5)) / 5 for _ in range(200)]
    width = lambda r, k: mean_interval(r, k)[1] - mean_interval(r, k)[0]  # noqa: E731
    assert width(many, 5) < width(one, 1)
    assert mean_interval([1.0] * 10, 3, 10) == (1.0, 1.0)  # a census has no doubt left


def test_noise_estimates():
    # 6 worse and 2 better of 40: the improvements' side says 2 flips each way are noise
    pairs = [((1, 1), (0, 1))] * 6 + [((0, 1), (1, 1))] * 2 + [((1, 1), (1, 1))] * 32
    assert noise_of_pairs(pairs) == pytest.approx(4 / 40)
    # a baseline of 3 samples: p(1-p) from its samples (2 of 3: 1/3 unbiased), times 1/3 + 1
    assert noise_of_pairs([((2, 3), (0, 1))]) == pytest.approx(1 / 3 * (1 / 3 + 1))
    assert noise_of_pairs([((3, 3), (0, 1))]) == 0.0  # a regression is not noise
    assert noise_from_rates([1.0, 0.0], 3) == 0.0
    # p = 1/2 with K = 2: two independent runs differ by 2 * (1/2 * 1/2 * 2) / 2 = 0.5
    assert noise_from_rates([0.5], 2) == pytest.approx(0.5)
    assert noise_from_rates([0.5], 1) is None
    # planning a one-sample run against a 2-sample baseline: p(1-p) = 1/2 (unbiased) x (1/2 + 1)
    assert noise_from_rates([0.5], 2, against=1) == pytest.approx(0.75)


@pytest.mark.parametrize(("entries", "sides"), [(16, (1, 1)), (200, (1, 1)), (16, (3, 1))])
def test_noise_estimate_is_unbiased_under_the_null(entries, sides):
    """Averaged over fixed-seed pairs of runs of an unchanged model, the estimate equals the
    true mean squared difference (the old smaller-side estimate was 75 % low at 16 entries)."""
    rng = random.Random(f"noise:{entries}:{sides}")
    chances = [rng.choice([0.0, 1.0, rng.uniform(0.1, 0.9)]) for _ in range(entries)]
    kb, kc = sides
    truth = sum(p * (1 - p) * (1 / kb + 1 / kc) for p in chances) / entries
    estimates = []
    for _ in range(4000):
        pairs = [
            (
                (sum(rng.random() < p for _ in range(kb)), kb),
                (sum(rng.random() < p for _ in range(kc)), kc),
            )
            for p in chances
        ]
        estimates.append(noise_of_pairs(pairs))
    mean = sum(estimates) / len(estimates)
    spread = (sum((e - mean) ** 2 for e in estimates) / len(estimates)) ** 0.5
    assert abs(mean - truth) <= 3 * spread / len(estimates) ** 0.5


def test_effective_entries_of_a_weighted_comparison():
    assert effective_entries([(0.01, 100, 0.1)]) == (100, pytest.approx(0.1))
    # two strata of 100 entries, one weighing 3x the other: Kish's n = 400^2 / 1000 = 160
    entries, noise = effective_entries([(3.0, 100, 0.2), (1.0, 100, 0.1)])
    assert entries == 160 and noise == pytest.approx((9 * 0.2 + 0.1) / 10)


def test_detectable_drop_shrinks_with_size_and_grows_with_noise():
    small, large = detectable_drop(100, 0.1, 0.01), detectable_drop(4000, 0.1, 0.01)
    assert small is not None and large is not None and large < small
    quiet = detectable_drop(1000, 0.02, 0.01)
    noisy = detectable_drop(1000, 0.2, 0.01)
    assert quiet is not None and noisy is not None and quiet < noisy
    # 6 entries cannot reach 0.001 even if all fail: 0.5**6 > 0.001
    assert detectable_drop(6, 0.1, 0.001) is None
    # with no noise the exact floor rules: 5 entries all failing reach 0.5**5 < 0.05
    assert detectable_drop(1000, 0.0, 0.05) == pytest.approx(
        max(5 / 1000, (1.6449 + 0.8416) ** 2 / 1000), rel=0.05
    )


def test_entries_to_detect_is_the_inverse_of_detectable_drop():
    needed = entries_to_detect(0.05, 0.1, 0.005, available=5000)
    found = detectable_drop(needed, 0.1, 0.005)
    assert found is not None and found <= 0.05
    fewer = detectable_drop(needed - 1, 0.1, 0.005)
    assert fewer is None or fewer > 0.05
    assert entries_to_detect(0.01, 0.1, 0.005, available=50) == 50  # cannot: all of them


def _verdicts(category: str, passing: list[bool]) -> dict[str, bool]:
    return {f"{category}_{i}": ok for i, ok in enumerate(passing)}


def test_gate_controls_the_family_with_holm_and_tarone():
    # The four live categories, each 3 worse and 0 better of 100: alone p = 0.125, which can
    # never pass a level of 0.05 (so they do not count); the Live group's 12 flips all one way
    # (p = 0.5**12) are tested at the full 0.05.
    current, baseline = {}, {}
    for name in ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"):
        current |= _verdicts(name, [False] * 3 + [True] * 97)
        baseline |= _verdicts(name, [True] * 100)
    gate = compare(current, baseline, GateSettings())
    by_name = {c.name: c for c in gate.comparisons}
    assert gate.family == 5 and gate.counted == 1
    assert by_name["live_simple"].p_value == pytest.approx(0.125)
    assert not any(c.failed for c in gate.comparisons if c.kind == "category")
    assert by_name["live"].p_value == pytest.approx(0.5**12)
    assert by_name["live"].significant and by_name["live"].failed
    assert by_name["live"].level == pytest.approx(0.05)


def test_gate_compares_pass_rates_and_lists_flaky_entries_apart():
    baseline = {f"simple_python_{i}": (3, 3) for i in range(60)}
    baseline |= {f"simple_python_{i}": (1, 3) for i in range(60, 80)}  # flaky before
    current = dict(baseline)
    for i in range(20):
        current[f"simple_python_{i}"] = (0, 3)  # a real regression
    for i in range(60, 70):
        current[f"simple_python_{i}"] = (0, 3)  # flaky before, worse now
    gate = compare(current, baseline, GateSettings())
    (category,) = [c for c in gate.comparisons if c.kind == "category"]
    assert len(category.regressions) == 20 and len(category.flaky_before) == 10
    # 20 entries whose 6 pooled samples split 3-3 all dealt the passes to the baseline (1 in 20
    # each), 10 whose one pass went to the baseline (1 in 2): far below the sign flip's 0.5**30
    assert category.failed and category.p_value < 1e-15
    assert category.detectable_drop is not None and category.detectable_drop < 25
    rate = lambda d: sum(p / k for p, k in d.values()) / len(d)  # noqa: E731
    assert category.current_accuracy == pytest.approx(rate(current))
    assert category.baseline_accuracy == pytest.approx(rate(baseline))


def test_gate_leaves_out_known_errors():
    baseline = {f"simple_python_{i}": True for i in range(30)}
    current = dict(baseline) | {"simple_python_0": False}
    gate = compare(current, baseline, GateSettings(mode="any"), exclude={"simple_python_0"})
    assert gate.known_errors == ["simple_python_0"] and not any(c.failed for c in gate.comparisons)
    assert compare(current, baseline, GateSettings(mode="any")).comparisons[0].failed


def test_detectable_drop_of_a_comparison_uses_the_first_holm_level():
    baseline = {f"simple_python_{i}": True for i in range(400)}
    current = dict(baseline)
    gate = compare(current, baseline, GateSettings(min_drop=0))
    (comparison,) = gate.comparisons
    expected = detectable_drop(400, 0.0, 0.05 / max(gate.counted, 1))
    assert expected is not None
    assert comparison.detectable_drop == pytest.approx(round(expected * 100, 2))
    assert math.isclose(comparison.p_value, 1.0)
