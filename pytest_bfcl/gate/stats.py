"""The statistics behind the gate and the intervals: McNemar's figures, Holm's step-down
procedure with Tarone's rule for discrete tests, confidence intervals of a mean pass rate, the
noise an unchanged model shows, and the smallest drop a comparison of a given size can detect.
(The paired test itself is :mod:`~pytest_bfcl.gate.permutation`.)

Pure functions on numbers, no pytest and no third-party packages, so each can be checked
against known values (``tests/report/test_stats.py``) and simulated (``benchmarks/gate_power.py``).

Notation: an entry asked ``K`` times has a pass rate ``passes / K``. A paired comparison looks
at ``d = baseline rate - current rate`` per entry; its "noise" is the mean of ``d^2`` an
unchanged model would show.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from statistics import NormalDist

# The power at which a comparison's detectable drop is stated.
POWER = 0.8
# Discordance assumed when a run has nothing to estimate it from (one sample, no baseline):
# the share of entries whose verdict differs between two runs of the same model. Published
# repeated runs differ on 4-30 % of entries; 10 % is a middle value.
ASSUMED_DISCORDANCE = 0.10

_NORMAL = NormalDist()


def binomial_two_sided(k: int, n: int) -> float:
    """Two-sided exact binomial p-value of ``k`` successes in ``n`` trials at p = 1/2 (the
    doubled smaller tail, capped at 1)."""
    if n <= 0:
        return 1.0
    low = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return min(1.0, 2 * tail / 2**n)


def mcnemar_exact(regressions: int, improvements: int) -> float:
    """Two-sided exact McNemar p-value for the given discordant counts."""
    return binomial_two_sided(min(regressions, improvements), regressions + improvements)


def tarone_count(smallest: Sequence[float], alpha: float) -> int:
    """Tarone's number of tests that count: the smallest ``k`` such that at most ``k`` of the
    tests could reach ``alpha / k``. A test that cannot reach significance however its flips
    fall costs the others nothing."""
    for k in range(1, len(smallest) + 1):
        if sum(1 for p in smallest if p <= alpha / k) <= k:
            return k
    return max(1, len(smallest))


def holm_tarone(
    p_values: Sequence[float], smallest: Sequence[float], alpha: float
) -> tuple[list[bool], list[float]]:
    """Holm's step-down procedure at family-wise error ``alpha``, each step counting only the
    remaining tests that could still reach significance (Tarone's rule, as extended to Holm's
    procedure by Hommel and Krummenauer). Returns, per test, whether it is rejected and the
    level it was held to (the level of the step at which the procedure reached or stopped
    before it)."""
    count = len(p_values)
    rejected = [False] * count
    levels = [0.0] * count
    remaining = sorted(range(count), key=lambda i: p_values[i])
    stopped = False
    while remaining:
        k = tarone_count([smallest[i] for i in remaining], alpha)
        level = alpha / k
        best = remaining[0]
        if stopped or p_values[best] > level:
            stopped = True
            for i in remaining:
                levels[i] = level
            break
        rejected[best] = True
        levels[best] = level
        remaining = remaining[1:]
    return rejected, levels


# -- intervals ---------------------------------------------------------------------------------


# -- power -------------------------------------------------------------------------------------


def z_one_sided(level: float) -> float:
    return _NORMAL.inv_cdf(1 - level)


def noise_of_pairs(pairs: Sequence[tuple[tuple[int, int], tuple[int, int]]]) -> float:
    """Per-entry noise (the mean squared difference ``pb/Kb - pc/Kc`` an unchanged model would
    show) of (baseline, current) pairs of (passes, K), estimated without bias under the null
    and without counting a regression of the current run as noise. Per entry: from the
    baseline's own samples when it has several (``p (1 - p)`` estimated without bias, times
    ``1/Kb + 1/Kc``), else from the current run's; with one sample a side, twice the squared
    differences that point toward an improvement (under the null half of all of them)."""
    if not pairs:
        return 0.0
    total = 0.0
    for (pb, kb), (pc, kc) in pairs:
        if kb > 1:
            total += pb * (kb - pb) / (kb * (kb - 1)) * (1 / kb + 1 / kc)
        elif kc > 1:
            total += pc * (kc - pc) / (kc * (kc - 1)) * (1 / kb + 1 / kc)
        elif pc > pb:
            total += 2.0
    return total / len(pairs)


def effective_entries(strata: Sequence[tuple[float, int, float]]) -> tuple[int, float]:
    """A weighted comparison as the equally weighted one with the same null variance: from
    (entry weight, entries, per-entry noise) per stratum, Kish's effective number of entries
    ``(sum w)^2 / sum w^2`` and the noise averaged with weights ``w^2``."""
    squares = sum(weight**2 * count for weight, count, _ in strata)
    if squares <= 0:
        return 0, 0.0
    total = sum(weight * count for weight, count, _ in strata)
    noise = sum(weight**2 * count * value for weight, count, value in strata) / squares
    return max(1, round(total**2 / squares)), noise


# How many entries' worth of weight the run-wide noise has in a comparison's own estimate.
NOISE_PRIOR_ENTRIES = 100


def shrunk_noise(own: float, entries: int, pooled: float) -> float:
    """A comparison's noise, pulled toward the run-wide figure in proportion to how few entries
    it has: a small category's own estimate is mostly chance (16 entries often show no flip at
    all, which would promise a power it does not have)."""
    weight = NOISE_PRIOR_ENTRIES
    return (own * entries + pooled * weight) / (entries + weight) if entries + weight else 0.0


def noise_from_rates(
    rates: Sequence[float], samples: int, against: int | None = None
) -> float | None:
    """The same noise, predicted from one run's repeated samples: an entry with pass
    probability p differs between a run of ``samples`` and one of ``against`` samples (the
    same by default) by a squared amount of p (1 - p) (1/samples + 1/against) on average
    (p (1 - p) estimated without bias from the samples). ``None`` with one sample."""
    if samples <= 1 or not rates:
        return None
    other = against or samples
    unbiased = [r * (1 - r) * samples / (samples - 1) for r in rates]
    return sum(unbiased) / len(unbiased) * (1 / samples + 1 / other)


# Up to this many entries the power of a one-sample comparison is computed exactly (the normal
# approximation is poor for a handful of entries); above it, approximated.
EXACT_POWER_ENTRIES = 80


def detectable_drop(
    entries: int,
    noise: float,
    level: float,
    power: float = POWER,
    samples: int = 1,
    min_drop: float = 0.0,
) -> float | None:
    """The smallest drop of the mean pass rate (a fraction) that a paired comparison of
    ``entries`` entries detects with probability ``power`` at one-sided ``level``, when an
    unchanged model's per-entry squared difference averages ``noise``, and the gate also needs
    an observed drop of at least ``min_drop``; ``None`` when no drop can be detected (too few
    entries for ``level`` even if every one of them fails).

    A drop of ``delta`` adds ``delta`` of discordance (entries that now fail). Up to
    :data:`EXACT_POWER_ENTRIES` entries with one sample the power is summed exactly over the
    counts of entries that got worse and better; above, the normal approximation of the
    paired test needs ``n delta`` to exceed ``z_level`` standard deviations of the null by
    ``z_power`` of the alternative."""
    if entries <= 0:
        return None
    needed = math.ceil(math.log2(1 / level) - 1e-12)  # flips all one way to reach the level
    if needed > entries:
        return None
    if samples == 1 and entries <= EXACT_POWER_ENTRIES:
        return _exact_detectable(entries, noise / 2, level, power, min_drop)
    z_a, z_b = z_one_sided(level), _NORMAL.inv_cdf(power)
    n = float(entries)

    def gap(delta: float) -> float:
        null = noise + delta
        alternative = max(null - delta * delta, 0.0)
        threshold = max(z_a * math.sqrt(n * null), n * min_drop)
        return n * delta - threshold - z_b * math.sqrt(n * alternative)

    if gap(1.0) < 0:
        return None
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if gap(mid) >= 0:
            high = mid
        else:
            low = mid
    floor = needed / (entries * samples)
    return max(high, min(floor, 1.0))


def _exact_power(entries: int, flip: float, delta: float, level: float, min_drop: float) -> float:
    """The chance that the exact one-sided McNemar test rejects at ``level`` with an observed
    drop of at least ``min_drop``, when each entry independently got worse with probability
    ``flip + delta``, better with ``flip``, and stayed the same otherwise."""
    worse_p, better_p = min(flip + delta, 1.0), min(flip, 1.0 - min(flip + delta, 1.0))
    same_p = max(1.0 - worse_p - better_p, 0.0)
    total = 0.0
    for worse in range(entries + 1):
        for better in range(entries - worse + 1):
            if worse - better < min_drop * entries - 1e-9:
                continue
            if _upper_tail(worse, worse + better) > level:
                continue
            same = entries - worse - better
            total += math.exp(
                math.lgamma(entries + 1)
                - math.lgamma(worse + 1)
                - math.lgamma(better + 1)
                - math.lgamma(same + 1)
                + _log_power(worse_p, worse)
                + _log_power(better_p, better)
                + _log_power(same_p, same)
            )
    return total


def _log_power(p: float, k: int) -> float:
    if k == 0:
        return 0.0
    return k * math.log(p) if p > 0 else -math.inf


@functools.lru_cache(maxsize=65536)
def _upper_tail(worse: int, discordant: int) -> float:
    """One-sided exact McNemar: P(at least ``worse`` of ``discordant`` fair coin flips)."""
    if discordant == 0:
        return 1.0
    return sum(math.comb(discordant, k) for k in range(worse, discordant + 1)) / 2**discordant


def _exact_detectable(
    entries: int, flip: float, level: float, power: float, min_drop: float
) -> float | None:
    if _exact_power(entries, flip, 1.0 - flip, level, min_drop) < power:
        return None
    low, high = 0.0, 1.0 - flip
    for _ in range(40):
        mid = (low + high) / 2
        if _exact_power(entries, flip, mid, level, min_drop) >= power:
            high = mid
        else:
            low = mid
    return high


def entries_to_detect(
    drop: float,
    noise: float,
    level: float,
    available: int,
    power: float = POWER,
    min_drop: float = 0.0,
) -> int:
    """The fewest entries (at most ``available``) whose paired comparison detects ``drop`` (a
    fraction); ``available`` when even all of them cannot."""
    low, high = 1, max(available, 1)
    best = detectable_drop(high, noise, level, power, min_drop=min_drop)
    if best is None or best > drop:
        return high
    while low < high:
        mid = (low + high) // 2
        found = detectable_drop(mid, noise, level, power, min_drop=min_drop)
        if found is not None and found <= drop:
            high = mid
        else:
            low = mid + 1
    return high
