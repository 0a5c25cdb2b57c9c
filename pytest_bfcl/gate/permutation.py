"""The gate's paired test with any sample counts: a permutation of each entry's pooled samples.

An unchanged model makes every sample of an entry, in the baseline or in the current run, a
draw from the same pass chance, so under the null all ways of dealing an entry's pooled
samples back to the two runs are equally likely: given its ``T`` passes among ``Kb + Kc``
samples, the current run's passes follow the hypergeometric law. That holds whatever ``Kb``
and ``Kc`` are (a merged baseline of many samples against a one-sample run included), which a
sign flip of the per-entry differences does not: with ``Kb != Kc`` their distribution is not
symmetric. With one sample a side the test is McNemar's exact test.

The statistic is the score difference the report prints: ``sum_i w_i (pb_i/Kb_i - pc_i/Kc_i)``
with ``w_i`` the entry's weight in the (category, group or overall) score. Entries of one
stratum (a category) share a weight, so a stratum's null distribution is computed exactly on
its integer lattice. Strata of different weights are combined on a fine grid, each stratum's
values rounded *up* to the grid: the rounded statistic is never below the true one, so the
p-value is never below the exact one (conservative), and it exceeds the exact test's by at most
what a shift of ``strata x grid step`` of the statistic is worth (:data:`GRID_POINTS`), plus
at most ``strata x 1e-15`` for the far tails cut off before combining (:data:`TAIL`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where a test runs: a run without a gate never loads it
    import numpy as np

Rate = tuple[int, int]  # (passes, samples)
Pair = tuple[Rate, Rate]  # (baseline, current)

# Points of the grid on which strata of different weights are combined (over the range of the
# statistic that has any probability): at 2^15 the rounding moves a full run's overall
# statistic by at most about 0.005 points.
GRID_POINTS = 2**15
# The finest lattice (1 / least common multiple of a stratum's sample counts) convolved
# exactly; a stratum mixing counts with a larger one is split by its pairs of counts.
MAX_SCALE = 60
# Outer cells of a stratum's null distribution with less probability than this are cut off
# before strata are combined (their mass is kept on the safe side; see _trimmed).
TAIL = 1e-15
# Added to a p-value computed in floating point, so that rounding errors of the convolutions
# (about 1e-15) can only make it larger.
FLOAT_SLACK = 1e-12


@dataclass(frozen=True)
class Stratum:
    """Entries sharing one weight in the score (a category's entries in a group's score)."""

    weight: float
    pairs: Sequence[Pair]


@dataclass(frozen=True)
class TestResult:
    p_value: float  # one-sided: P(statistic >= observed) under the null
    smallest: float  # the smallest p-value these margins allow (Tarone's rule)
    statistic: float  # the observed weighted difference (baseline - current)


@dataclass(frozen=True)
class _Lattice:
    """A distribution on ``offset + index`` (integers, in units of 1/scale), probabilities
    by index."""

    offset: int
    probs: np.ndarray


def entry_null(baseline: Rate, current: Rate, scale: int) -> tuple[list[int], list[float]]:
    """Under the null, the values (in units of ``1/scale``) ``pb/Kb - pc/Kc`` can take when the
    entry's pooled passes are dealt back to the runs at random, and their probabilities."""
    (pb, kb), (pc, kc) = baseline, current
    total, pooled = pb + pc, kb + kc
    ways = math.comb(pooled, kc)
    values, probs = [], []
    for j in range(max(0, total - kb), min(total, kc) + 1):  # j: the current run's passes
        values.append((total - j) * (scale // kb) - j * (scale // kc))
        probs.append(math.comb(total, j) * math.comb(pooled - total, kc - j) / ways)
    return values, probs


def _stratum_null(pairs: Sequence[Pair], scale: int) -> tuple[_Lattice, int]:
    """The exact null distribution of a stratum's summed differences on its lattice, and the
    observed sum (both in units of 1/scale)."""
    import numpy as np

    observed = sum(pb * (scale // kb) - pc * (scale // kc) for (pb, kb), (pc, kc) in pairs)
    # The null law of an entry depends on its pooled passes and sample counts only.
    margins = Counter((pb + pc, kb, kc) for (pb, kb), (pc, kc) in pairs)
    offset = 0
    dist = np.ones(1)
    for (total, kb, kc), count in margins.items():
        passes = min(total, kb)
        values, probs = entry_null((passes, kb), (total - passes, kc), scale)
        if len(values) == 1:  # every sample passed, or none did: no randomness
            offset += count * values[0]
            continue
        spread = np.zeros(values[0] - values[-1] + 1)
        for value, prob in zip(values, probs, strict=True):
            spread[value - values[-1]] = prob
        for _ in range(count):
            dist = np.convolve(dist, spread)
        offset += count * values[-1]
    return _Lattice(offset, dist), observed


def _common_scale(pairs: Sequence[Pair]) -> int:
    return math.lcm(1, *(k for rates in pairs for _, k in rates))


def _upper_tail(probs: np.ndarray, start: int) -> float:
    """P(index >= start)."""
    import numpy as np

    if start <= 0:
        return 1.0
    if start >= len(probs):
        return 0.0
    return float(np.clip(probs[start:], 0.0, None).sum())


def _small_lattices(strata: Sequence[Stratum]) -> list[Stratum]:
    """The non-empty strata, one whose sample counts have a least common multiple above
    :data:`MAX_SCALE` split by (Kb, Kc): its lattice would be too fine to convolve quickly
    (counts 1-10 in one category: 2,520 cells per unit), so its parts are combined on the grid
    instead (conservative rather than exact)."""
    out = []
    for stratum in strata:
        if not stratum.pairs:
            continue
        if _common_scale(stratum.pairs) <= MAX_SCALE:
            out.append(stratum)
            continue
        parts: dict[tuple[int, int], list[Pair]] = {}
        for pair in stratum.pairs:
            parts.setdefault((pair[0][1], pair[1][1]), []).append(pair)
        out.extend(Stratum(stratum.weight, pairs) for pairs in parts.values())
    return out


def permutation_test(strata: Sequence[Stratum]) -> TestResult:
    """The one-sided permutation test of the weighted score difference over these strata."""
    nulls = []
    statistic = 0.0
    for stratum in _small_lattices(strata):
        scale = _common_scale(stratum.pairs)
        lattice, observed = _stratum_null(stratum.pairs, scale)
        nulls.append((stratum.weight / scale, lattice, observed))
        statistic += stratum.weight * observed / scale
    if not nulls:
        return TestResult(1.0, 1.0, 0.0)
    if len(nulls) == 1:
        _, lattice, observed = nulls[0]
        top = lattice.offset + len(lattice.probs) - 1
        return TestResult(
            p_value=min(1.0, _upper_tail(lattice.probs, observed - lattice.offset)),
            smallest=_upper_tail(lattice.probs, top - lattice.offset),
            statistic=statistic,
        )
    return _on_grid(nulls, statistic)


def _trimmed(lattice: _Lattice) -> tuple[_Lattice, float]:
    """The lattice without its outer cells of negligible probability (below :data:`TAIL`):
    the lower ones' mass moved up into the first cell kept (a larger value: conservative), the
    upper ones' dropped and returned, for the caller to add to the p-value (a union bound)."""
    import numpy as np

    probs = np.clip(lattice.probs, 0.0, None)
    below = np.cumsum(probs)
    above = np.cumsum(probs[::-1])[::-1]
    first = int(np.searchsorted(below, TAIL, side="right"))
    last = len(probs) - 1 - int(np.searchsorted(above[::-1], TAIL, side="right"))
    if first > last:  # all the mass within one cell's worth of the cut-offs: keep everything
        return lattice, 0.0
    kept = probs[first : last + 1].copy()
    kept[0] += below[first - 1] if first else 0.0
    dropped = float(above[last + 1]) if last + 1 < len(probs) else 0.0
    return _Lattice(lattice.offset + first, kept), dropped


def _on_grid(nulls: list[tuple[float, _Lattice, int]], statistic: float) -> TestResult:
    """Strata of different weights: each stratum's values rounded up to a common grid, the
    rounded distributions convolved (by FFT), and the tail read at the observed statistic."""
    import numpy as np

    full_top = sum(unit * (lat.offset + len(lat.probs) - 1) for unit, lat, _ in nulls)
    trimmed = [(unit, *_trimmed(lat)) for unit, lat, _ in nulls]
    dropped = sum(mass for _, _, mass in trimmed)
    low = sum(unit * lat.offset for unit, lat, _ in trimmed)
    high = sum(unit * (lat.offset + len(lat.probs) - 1) for unit, lat, _ in trimmed)
    step = max(high - low, 1e-12) / GRID_POINTS
    pieces = []
    start = 0
    for unit, lattice, _ in trimmed:
        values = unit * (lattice.offset + np.arange(len(lattice.probs)))
        # floor + 1: strictly above the value, so float error cannot round it down
        index = np.floor(values / step).astype(np.int64) + 1
        first = int(index[0])
        piece = np.zeros(int(index[-1]) - first + 1)
        np.add.at(piece, index - first, lattice.probs)
        pieces.append(piece)
        start += first
    size = sum(len(p) - 1 for p in pieces) + 1
    length = 1 << (size - 1).bit_length()
    spectrum = np.ones(length // 2 + 1, dtype=complex)
    for piece in pieces:
        spectrum *= np.fft.rfft(piece, length)
    dist = np.fft.irfft(spectrum, length)[:size]

    def p_at(value: float) -> float:
        # P(step * index >= value): every index from ceil(value / step) up, taken a hair
        # lower so that float error in the value cannot drop a cell
        threshold = math.ceil(value / step - 1e-7) - start
        return min(1.0, _upper_tail(dist, threshold) + dropped + FLOAT_SLACK)

    return TestResult(p_value=p_at(statistic), smallest=p_at(full_top), statistic=statistic)
