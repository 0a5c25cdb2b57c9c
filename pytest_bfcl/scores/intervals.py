"""Confidence intervals of scores: Wilson intervals for a category's pass rate, the mean
of per-entry pass rates with its variance, the finite-population correction of a sample, and
the design effect of entries that cluster (they share a function set or a conversation)."""

from __future__ import annotations

import math
from collections.abc import Sequence

# z of a two-sided 95 % interval
Z95 = 1.959964


def wilson(p: float, n: float) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion ``p`` measured on (effective) size ``n``."""
    if n <= 0:
        return (0.0, 1.0)
    z2 = Z95**2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def finite_correction(scored: int, population: int | None) -> float:
    """The finite-population correction of a sample of ``scored`` out of ``population``
    entries (1 for an unsampled run: entries stand for tasks like them)."""
    if not population or population <= 1:
        return 1.0
    return max((population - scored) / (population - 1), 0.0)


def design_effect(rates: Sequence[float], clusters: Sequence[str] | None) -> float:
    """How many times the variance of the mean of ``rates`` exceeds what independent entries
    would give, when entries of a cluster (``clusters[i]``: entry i's) may fail together: the
    cluster-robust (CR1) variance over the independent one, never below 1. Every entry its own
    cluster gives 1; all in one cluster, ``n`` (one unit of evidence)."""
    n = len(rates)
    if not clusters or n < 2:
        return 1.0
    mean = math.fsum(rates) / n
    residuals = [r - mean for r in rates]
    independent = math.fsum(e * e for e in residuals) / (n - 1)
    if independent <= 0:
        return 1.0
    sums: dict[str, list[float]] = {}
    for key, e in zip(clusters, residuals, strict=True):
        sums.setdefault(key, []).append(e)
    count = len(sums)
    if count < 2:
        return float(n)
    clustered = count / (count - 1) * math.fsum(math.fsum(v) ** 2 for v in sums.values()) / n
    return max(1.0, clustered / independent)


def mean_interval(
    rates: Sequence[float],
    samples: int,
    population: int | None = None,
    clusters: Sequence[str] | None = None,
) -> tuple[float, float]:
    """95 % interval of the mean pass rate of entries each asked ``samples`` times.

    Entries are the units (their samples are not independent of each other): the variance of
    the mean is the spread of the per-entry rates over the number of entries, turned into an
    effective size for Wilson's interval (which stays inside [0, 1] and is not degenerate at 0
    or 100 %). With one sample it is Wilson's interval on the entries. ``clusters``: each
    entry's cluster (:mod:`pytest_bfcl.dataset.clusters`); the effective size is divided by
    their design effect. ``population``: the category's size when the entries are a sample of
    it. Sums are exact (``math.fsum``), so the figure does not depend on the order the verdicts
    arrived in (xdist workers)."""
    n = len(rates)
    if n == 0:
        return (0.0, 1.0)
    mean = math.fsum(rates) / n
    fpc = finite_correction(n, population)
    if fpc == 0:
        return (mean, mean)
    effective: float = float(n * max(samples, 1))
    if samples > 1 and 0.0 < mean < 1.0:
        spread = math.fsum((r - mean) ** 2 for r in rates) / (n - 1) if n > 1 else 0.0
        if spread > 0:
            effective = min(max(mean * (1 - mean) / (spread / n), 1.0), n * samples)
    effective = max(effective / design_effect(rates, clusters), 1.0)
    return wilson(mean, effective / fpc)


def mean_variance(
    rates: Sequence[float],
    samples: int,
    population: int | None = None,
    clusters: Sequence[str] | None = None,
) -> float:
    """Variance of a mean pass rate (as :func:`mean_interval` uses it), for combining categories
    into group scores. Agresti-Coull's adjustment keeps it above 0 at 0 or 100 %."""
    n = len(rates)
    if n == 0:
        return 0.0
    fpc = finite_correction(n, population) * design_effect(rates, clusters)
    if samples <= 1:
        adjusted = (math.fsum(rates) + 2) / (n + 4)
        return adjusted * (1 - adjusted) / (n + 4) * fpc
    mean = math.fsum(rates) / n
    spread = math.fsum((r - mean) ** 2 for r in rates) / (n - 1) if n > 1 else 0.0
    floor = ((mean * n * samples + 2) / (n * samples + 4)) * (
        1 - (mean * n * samples + 2) / (n * samples + 4)
    )
    return max(spread / n, floor / (n * samples + 4)) * fpc
