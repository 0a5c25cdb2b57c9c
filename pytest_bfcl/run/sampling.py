"""Stratified, seeded sampling of entries, so a pull request can run a fixed, cheap slice.

The same spec and seed give the same sample in every process (xdist workers included).
"""

from __future__ import annotations

import random


def allocate(sizes: dict[str, int], sample: float | int) -> dict[str, int]:
    """How many entries to draw from each category: a fraction of each (at least one), or a
    count that is the whole sample's size, split in proportion to the categories' sizes
    (largest remainders) with at least one entry from each non-empty category. A count fixes a
    run's cost whatever it selects; one below the number of categories takes one from each."""
    if isinstance(sample, float):
        return {name: min(n, max(1, round(sample * n))) if n else 0 for name, n in sizes.items()}
    total = sum(sizes.values())
    if sample >= total:
        return dict(sizes)
    counts = {name: 0 for name in sizes}
    small: set[str] = set()  # categories whose share is under one entry: one each
    while True:
        big = {name: n for name, n in sizes.items() if n and name not in small}
        rest = sample - len(small)
        if not big or rest <= 0:
            return {name: 1 if name in small or n else 0 for name, n in sizes.items()}
        share = {name: rest * n / sum(big.values()) for name, n in big.items()}
        under = {name for name, q in share.items() if q < 1}
        if not under:
            break
        small |= under
    counts.update({name: 1 for name in small})
    counts.update({name: int(q) for name, q in share.items()})
    left = sample - sum(counts.values())
    for name in sorted(share, key=lambda k: share[k] - int(share[k]), reverse=True)[:left]:
        counts[name] += 1
    return counts


def stratified_sample(
    ids_by_category: dict[str, list[str]], sample: float | int, seed: int
) -> dict[str, set[str]]:
    counts = allocate({name: len(ids) for name, ids in ids_by_category.items()}, sample)
    return sample_counts(ids_by_category, counts, seed)


def sample_counts(
    ids_by_category: dict[str, list[str]], counts: dict[str, int], seed: int
) -> dict[str, set[str]]:
    """``counts[name]`` entries of each category, drawn with the seed."""
    chosen = {}
    for name, ids in ids_by_category.items():
        rng = random.Random(f"{seed}:{name}")
        chosen[name] = set(rng.sample(sorted(ids), counts[name]))
    return chosen


def stage_counts(sizes: dict[str, int], fractions: tuple[float, ...]) -> list[dict[str, int]]:
    """Per stage, how many entries of each category it holds (cumulative, never fewer than the
    stage before, at least one per non-empty category; a fraction of 1 is the whole category)."""
    out: list[dict[str, int]] = []
    for fraction in fractions:
        counts = allocate(sizes, float(fraction))
        if out:
            counts = {name: max(n, out[-1][name]) for name, n in counts.items()}
        out.append(counts)
    return out


def nested_stages(
    ids_by_category: dict[str, list[str]], fractions: tuple[float, ...], seed: int
) -> list[dict[str, set[str]]]:
    """The entries of each stage of a sequential run, per category: every stage the first
    entries of one seeded shuffle of the category, so each stage holds those before it and
    all are fixed before anything is asked."""
    counts = stage_counts({name: len(ids) for name, ids in ids_by_category.items()}, fractions)
    shuffled = {}
    for name, ids in ids_by_category.items():
        order = sorted(ids)
        random.Random(f"{seed}:stages:{name}").shuffle(order)
        shuffled[name] = order
    return [
        {name: set(order[: stage[name]]) for name, order in shuffled.items()} for stage in counts
    ]
