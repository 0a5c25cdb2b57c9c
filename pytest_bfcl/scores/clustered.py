"""Clusters that cross categories (a multi-turn conversation posed in four categories): how
much they widen a group's interval beyond what its categories' own intervals add up to.

A group's variance is combined from its categories' (each already widened by the clusters
inside it, :func:`~pytest_bfcl.gate.stats.design_effect`), as if the categories were
independent. Where one cluster has entries in several categories their errors move together;
the factor here is the cluster-robust variance of the group's weighted score with clusters
crossing categories, over the same with each category's part of a cluster kept apart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def _robust(sums: Mapping[object, float]) -> float:
    count = len(sums)
    if count < 2:
        return 0.0
    return count / (count - 1) * math.fsum(v * v for v in sums.values())


def crossing_inflation(
    weights: Mapping[str, float],
    entries: Mapping[str, Sequence[tuple[str, float]]],
) -> float:
    """``weights``: each category's weight in the group's score; ``entries``: per category,
    (cluster, pass rate) of its entries. At least 1."""
    crossed: dict[object, float] = {}
    apart: dict[object, float] = {}
    for category, weight in weights.items():
        items = entries.get(category) or []
        if not items:
            continue
        mean = math.fsum(r for _, r in items) / len(items)
        for key, rate in items:
            part = weight / len(items) * (rate - mean)
            crossed[key] = crossed.get(key, 0.0) + part
            apart[(category, key)] = apart.get((category, key), 0.0) + part
    within = _robust(apart)
    return max(1.0, _robust(crossed) / within) if within > 0 else 1.0
