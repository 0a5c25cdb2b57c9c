"""The leaderboard's aggregation of category scores into group scores and the V4 overall.

Following the reference: Non-Live = mean(Simple, Multiple, Parallel, Parallel Multiple) with
Simple = mean of the three languages; Live = count-weighted mean of the four live AST
categories; Irrelevance = mean(irrelevance, live_irrelevance); Multi-Turn = mean of four;
Agentic = mean(Web Search, Memory); Overall = 10/10/10/30/40 % of those five
(:data:`~pytest_bfcl.dataset.groups.GROUPS`).

Unlike the reference, a category that was not run is never counted as zero silently: every
summary that needs it is ``None`` ("not run"). The reference's own number (missing categories
as 0) is kept beside it for comparison with the leaderboard.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_bfcl.dataset.categories import ALL_SCORING, DATASET_SIZES, EXECUTABLE
from pytest_bfcl.dataset.groups import GROUPS, OVERALL_WEIGHTS
from pytest_bfcl.scores.intervals import Z95
from pytest_bfcl.scores.models import CategoryScore, GroupScore


@dataclass(frozen=True)
class _Part:
    accuracy: float | None  # None: not (fully) run
    reference: float  # missing counted as 0
    count: int  # entries it stands for (the population, for a sample)
    missing: tuple[str, ...]
    members: tuple[str, ...]
    variance: float = 0.0  # of the estimate, when it comes from a sample
    scored: int = 0  # entries actually scored
    sampled: bool = False
    interval: tuple[float, float] | None = None  # a sampled category's own interval


def _leaf(cats: dict[str, CategoryScore], name: str, sized_by_run: bool) -> _Part:
    score = cats.get(name)
    if score is None or score.accuracy is None or not (sized_by_run or score.complete):
        return _Part(None, 0.0, DATASET_SIZES[name], (name,), (name,))
    variance = score.variance or 0.0
    if score.sampled_from is not None:
        return _Part(
            score.accuracy, score.accuracy, score.sampled_from, (), (name,), variance,
            score.total, True, score.ci95,
        )  # fmt: skip
    return _Part(
        score.accuracy, score.accuracy, score.total, (), (name,), variance, score.total,
        False, score.ci95,
    )  # fmt: skip


def _combine(parts: list[_Part], reference: float, weights: list[float]) -> _Part:
    """Parts combined with these weights (normalised here): the estimate, and the variance of
    a weighted sum of independent samples."""
    missing = tuple(m for p in parts for m in p.missing)
    total = sum(weights)
    variance = sum((w / total) ** 2 * p.variance for p, w in zip(parts, weights, strict=True))
    return _Part(
        None if missing else reference,
        reference,
        sum(p.count for p in parts),
        missing,
        tuple(m for p in parts for m in p.members),
        variance,
        sum(p.scored for p in parts),
        any(p.sampled for p in parts),
    )


def _mean(parts: list[_Part]) -> _Part:
    return _combine(parts, sum(p.reference for p in parts) / len(parts), [1.0] * len(parts))


def _count_weighted(parts: list[_Part]) -> _Part:
    total = sum(p.count for p in parts)
    weights = [float(p.count) for p in parts]
    return _combine(parts, sum(p.reference * p.count for p in parts) / total, weights)


def _weighted(parts: list[_Part], weights: list[float]) -> _Part:
    weighted = sum(p.reference * w for p, w in zip(parts, weights, strict=True))
    return _combine(parts, weighted / sum(weights), weights)


def aggregate_groups(
    cats: dict[str, CategoryScore],
    sized_by_run: bool = False,
    inflation: dict[str, float] | None = None,
) -> dict[str, GroupScore]:
    """The leaderboard's summaries (:data:`~pytest_bfcl.dataset.groups.GROUPS`) and the V4
    overall. With ``sized_by_run`` a category counts as present when it has any scored entry
    (comparisons on a sample), weighted by the entries scored. pass^K and pass@K of a group
    combine its categories' with the same formula as the mean. ``inflation``: per group, the
    factor clusters crossing its categories multiply its variance by (see
    :mod:`~pytest_bfcl.scores.clustered`)."""
    parts = _combined(cats, sized_by_run)
    every = _combined(_with_accuracy(cats, "pass_all"), sized_by_run)
    anyone = _combined(_with_accuracy(cats, "pass_any"), sized_by_run)
    names = [g.name for g in GROUPS] + ["overall", "overall_without_web_search"]
    factors = inflation or {}
    return {
        name: _group_score(parts[name], every[name], anyone[name], cats, factors.get(name, 1.0))
        for name in names
    }


def _with_accuracy(cats: dict[str, CategoryScore], field_name: str) -> dict[str, CategoryScore]:
    return {
        name: score.model_copy(update={"accuracy": getattr(score, field_name), "ci95": None})
        for name, score in cats.items()
    }


def _combined(cats: dict[str, CategoryScore], sized_by_run: bool) -> dict[str, _Part]:
    parts = {name: _leaf(cats, name, sized_by_run) for name in (*ALL_SCORING, *EXECUTABLE)}
    for group in GROUPS:
        members = [parts[m] for m in group.members]
        parts[group.name] = (
            members[0]
            if len(members) == 1
            else _count_weighted(members)
            if group.combine == "count_weighted"
            else _mean(members)
        )
    weights = list(OVERALL_WEIGHTS.values())
    parts["overall"] = _weighted([parts[n] for n in OVERALL_WEIGHTS], weights)
    # the same formula with the agentic score taken from memory alone (web search skipped)
    without_web = [parts["memory" if n == "agentic" else n] for n in OVERALL_WEIGHTS]
    parts["overall_without_web_search"] = _weighted(without_web, weights)
    return parts


def _group_score(
    part: _Part,
    every: _Part,
    anyone: _Part,
    cats: dict[str, CategoryScore],
    inflation: float = 1.0,
) -> GroupScore:
    interval = part.interval  # one category: the same interval as its row
    if interval is None and part.accuracy is not None and len(part.members) > 1:
        half = Z95 * math.sqrt(part.variance * inflation)
        interval = (max(0.0, part.accuracy - half), min(1.0, part.accuracy + half))
    low, high = interval if (part.sampled and interval is not None) else (None, None)
    members = [cats[m] for m in part.members if m in cats]
    return GroupScore(
        accuracy=part.accuracy,
        reference_accuracy=part.reference,
        missing=list(part.missing),
        members=list(part.members),
        sampled=(part.scored, part.count) if part.sampled else None,
        ci_low=low,
        ci_high=high,
        samples=max((c.samples for c in members), default=1),
        ci95=interval if part.accuracy is not None else None,
        pass_all=every.accuracy,
        pass_any=anyone.accuracy,
        flaky=sum(c.flaky for c in members),
        flaky_ids=[i for c in members for i in c.flaky_ids],
    )


def category_weights(
    cats: dict[str, CategoryScore], names: tuple[str, ...]
) -> dict[str, dict[str, float]]:
    """Each category's weight in each named group's (or the overall) score, as the run-sized
    aggregation combines them: every score is linear in its categories' accuracies, so a
    category's weight is the score with that category at 1 and every other at 0. The gate
    tests the very difference the tables print with these."""
    out: dict[str, dict[str, float]] = {name: {} for name in names}
    for probed in cats:
        unit = {
            name: score.model_copy(update={"accuracy": float(name == probed)})
            for name, score in cats.items()
        }
        parts = _combined(unit, sized_by_run=True)
        for name in names:
            weight = parts[name].accuracy
            if weight:
                out[name][probed] = weight
    return out
