"""Stratified, seeded sampling of entries, so a pull request can run a fixed, cheap slice.

The same spec and seed give the same sample in every process (xdist workers included).
"""

from __future__ import annotations

import random


def allocate(sizes: dict[str, int], sample: float | int) -> dict[str, int]:
    """How many entries to draw from each category: a fraction of each, or a total split in
    proportion to category sizes (largest remainder), at least one per non-empty category."""
    if isinstance(sample, float):
        return {name: min(n, max(1, round(sample * n))) if n else 0 for name, n in sizes.items()}
    total = sum(sizes.values())
    if sample >= total:
        return dict(sizes)
    exact = {name: sample * n / total for name, n in sizes.items()}
    counts = {
        name: min(sizes[name], max(1 if sizes[name] else 0, int(q))) for name, q in exact.items()
    }
    leftover = sample - sum(counts.values())
    for name in sorted(exact, key=lambda k: exact[k] - int(exact[k]), reverse=True):
        if leftover <= 0:
            break
        if counts[name] < sizes[name]:
            counts[name] += 1
            leftover -= 1
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
