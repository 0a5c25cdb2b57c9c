"""The permutation test of the gate against brute-force enumeration of every way the pooled
samples of each entry can be dealt back to the two runs."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from pytest_bfcl.gate import permutation
from pytest_bfcl.gate.permutation import Stratum, permutation_test
from pytest_bfcl.gate.stats import mcnemar_exact


def _deals(pair):
    """Every equally likely (baseline, current) an entry's pooled samples can be dealt into."""
    (pb, kb), (pc, kc) = pair
    pooled = [1] * (pb + pc) + [0] * (kb + kc - pb - pc)
    for chosen in itertools.combinations(range(kb + kc), kc):
        current = sum(pooled[i] for i in chosen)
        yield ((pb + pc - current, kb), (current, kc))


def _statistic(weighted_pairs):
    return sum(
        w * (Fraction(pb, kb) - Fraction(pc, kc)) for w, ((pb, kb), (pc, kc)) in weighted_pairs
    )


def brute_force(strata: list[tuple[Fraction, list]]):
    """Every joint deal with its statistic (all equally likely)."""
    flat = [(w, pair) for w, pairs in strata for pair in pairs]
    observed = _statistic(flat)
    outcomes = [
        _statistic([(w, deal) for (w, _), deal in zip(flat, deals, strict=True)])
        for deals in itertools.product(*(list(_deals(pair)) for _, pair in flat))
    ]
    return observed, outcomes


def tail(outcomes, at):
    return Fraction(sum(1 for o in outcomes if o >= at), len(outcomes))


def random_pair(rng, sides):
    kb, kc = sides
    return ((rng.randint(0, kb), kb), (rng.randint(0, kc), kc))


@pytest.mark.parametrize("sides", [(1, 1), (3, 1), (1, 3), (2, 3), (3, 2), (5, 1)])
@pytest.mark.parametrize("seed", range(6))
def test_one_stratum_is_exact(sides, seed):
    rng = random.Random(f"{sides}:{seed}")
    pairs = [random_pair(rng, sides) for _ in range(rng.randint(1, 4))]
    weight = Fraction(1, len(pairs))
    observed, outcomes = brute_force([(weight, pairs)])
    result = permutation_test([Stratum(float(weight), pairs)])
    assert result.p_value == pytest.approx(float(tail(outcomes, observed)), abs=1e-12)
    assert result.smallest == pytest.approx(float(tail(outcomes, max(outcomes))), abs=1e-12)
    assert result.statistic == pytest.approx(float(observed))


def test_mixed_sample_counts_within_a_stratum_are_exact():
    pairs = [((2, 3), (0, 1)), ((1, 1), (0, 2)), ((4, 5), (1, 1)), ((0, 2), (1, 1))]
    observed, outcomes = brute_force([(Fraction(1, 4), pairs)])
    result = permutation_test([Stratum(0.25, pairs)])
    assert result.p_value == pytest.approx(float(tail(outcomes, observed)), abs=1e-12)


def test_one_sample_a_side_is_mcnemars_exact_test():
    pairs = [((1, 1), (0, 1))] * 8 + [((0, 1), (1, 1))] * 2 + [((1, 1), (1, 1))] * 30
    result = permutation_test([Stratum(1 / 40, pairs)])
    assert result.p_value == pytest.approx(56 / 1024)  # P(at least 8 of 10 fair coins)
    assert 2 * result.p_value == pytest.approx(mcnemar_exact(8, 2))
    assert result.smallest == pytest.approx(0.5**10)
    assert permutation_test([Stratum(1.0, [((1, 1), (1, 1))])]).p_value == 1.0
    assert permutation_test([]).p_value == 1.0


@pytest.mark.parametrize("seed", range(8))
def test_weighted_strata_are_conservative_and_close_to_exact(seed):
    rng = random.Random(f"weighted:{seed}")
    strata = []
    for _ in range(rng.randint(2, 3)):
        sides = rng.choice([(1, 1), (3, 1), (2, 2)])
        size = rng.randint(1, 2)
        pairs = [random_pair(rng, sides) for _ in range(size)]
        strata.append((Fraction(rng.randint(1, 9), 7 * size), pairs))
    observed, outcomes = brute_force(strata)
    result = permutation_test([Stratum(float(w), pairs) for w, pairs in strata])
    exact = float(tail(outcomes, observed))
    assert result.p_value >= exact - 1e-12  # never below the exact test
    # ... and above it only by what shifting the statistic by the rounding is worth
    # (each stratum's values move by at most a grid step; the range is at most 2 sum(w))
    widest = 2 * sum(float(w) * len(pairs) for w, pairs in strata)
    slack = len(strata) * widest / permutation.GRID_POINTS
    shifted = float(tail(outcomes, observed - Fraction(slack)))
    assert result.p_value <= shifted + 1e-9


@pytest.mark.parametrize("sides", [(1, 1), (3, 1), (6, 1), (2, 3)])
def test_the_test_is_valid_at_every_level_given_the_margins(sides):
    """Over every deal of the pooled samples (the null, given each entry's passes), a p-value
    at or below a level comes up at most that often."""
    rng = random.Random(f"valid:{sides}")
    pairs = [random_pair(rng, sides) for _ in range(4)]
    flat_deals = list(itertools.product(*(list(_deals(pair)) for pair in pairs)))
    p_values = sorted(permutation_test([Stratum(0.25, list(d))]).p_value for d in flat_deals)
    for level in sorted(set(p_values)):
        share = sum(1 for p in p_values if p <= level + 1e-12) / len(p_values)
        assert share <= level + 1e-9


def test_a_stratum_of_many_different_sample_counts_is_split_and_stays_conservative():
    """Counts 1-10 in one stratum (lattice unit 1/2520) are tested as one stratum per pair of
    counts, combined on the grid: never below the exact p-value, and close to it."""
    rng = random.Random("many counts")
    pairs = [((rng.randint(0, k), k), (rng.randint(0, 1), 1)) for k in (7, 8, 9, 10, 1)]
    observed, outcomes = brute_force([(Fraction(1, 5), pairs)])
    result = permutation_test([Stratum(0.2, pairs)])
    exact = float(tail(outcomes, observed))
    assert exact - 1e-12 <= result.p_value
    slack = 5 * 2 * 0.2 * 5 / permutation.GRID_POINTS
    assert result.p_value <= float(tail(outcomes, observed - Fraction(slack))) + 1e-9
