"""The regression gate: paired comparison with a baseline, and absolute score thresholds.

For every category, group and the overall score, the entries scored in both runs are paired.
Flips are counted both ways and McNemar's exact test (a two-sided binomial test on the flips)
gives the p-value. With the default ``significant`` gate a comparison fails only when its drop
is at least ``min_drop`` points *and* ``p < alpha``; ``any`` fails on a single regressed entry;
``off`` never fails.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import comb
from typing import Literal

from pydantic import BaseModel

from pytest_bfcl.dataset.categories import category_of_id, natural_key
from pytest_bfcl.dataset.groups import GATED
from pytest_bfcl.report.scores import CategoryScore, Scores, aggregate_groups
from pytest_bfcl.settings import GateSettings


class Comparison(BaseModel):
    name: str
    kind: Literal["category", "group", "overall"]
    paired: int
    baseline_accuracy: float
    current_accuracy: float
    regressions: list[str]  # passed in the baseline, fail now
    improvements: list[str]  # failed in the baseline, pass now
    p_value: float
    failed: bool = False

    @property
    def drop_points(self) -> float:
        return (self.baseline_accuracy - self.current_accuracy) * 100


class GateResult(BaseModel):
    settings: GateSettings
    comparisons: list[Comparison]
    common_only: bool = False  # compared on the common part of a mismatched baseline
    threshold_failures: list[str] = []
    # What the run was asked to score but did not (see report/completeness.py); it fails the
    # gate unless the run allowed an incomplete result, and is reported either way.
    incomplete: list[str] = []
    allow_incomplete: bool = False

    @property
    def failed(self) -> bool:
        return (
            bool(self.threshold_failures)
            or any(c.failed for c in self.comparisons)
            or (bool(self.incomplete) and not self.allow_incomplete)
        )


def mcnemar_exact(regressions: int, improvements: int) -> float:
    """Two-sided exact McNemar p-value for the given discordant counts."""
    n = regressions + improvements
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(regressions, improvements) + 1))
    return min(1.0, 2 * tail / 2**n)


def _scores_on(ids: Iterable[str], verdicts: dict[str, bool]) -> dict[str, CategoryScore]:
    """Per-category scores over the given ids (treated as complete categories)."""
    tallies: dict[str, list[int]] = {}
    for entry_id in ids:
        counts = tallies.setdefault(category_of_id(entry_id), [0, 0])
        counts[0] += int(verdicts[entry_id])
        counts[1] += 1
    return {
        name: CategoryScore(
            accuracy=correct / total,
            correct=correct,
            total=total,
            dataset_size=total,
            complete=True,
        )
        for name, (correct, total) in tallies.items()
    }


def compare(
    current: dict[str, bool],
    baseline: dict[str, bool],
    settings: GateSettings,
    common_only: bool = False,
) -> GateResult:
    common = sorted(set(current) & set(baseline))
    by_category: dict[str, list[str]] = {}
    for entry_id in common:
        by_category.setdefault(category_of_id(entry_id), []).append(entry_id)
    comparisons = [
        _comparison(name, "category", ids, current, baseline) for name, ids in by_category.items()
    ]
    current_groups = aggregate_groups(_scores_on(common, current), sized_by_run=True)
    baseline_groups = aggregate_groups(_scores_on(common, baseline), sized_by_run=True)
    for name in (*GATED, "overall"):
        now, before = current_groups[name], baseline_groups[name]
        if now.accuracy is None or before.accuracy is None:
            continue  # a category of the group was not run on both sides
        members = [i for i in common if category_of_id(i) in now.members]
        comparisons.append(
            _comparison(
                name,
                "overall" if name == "overall" else "group",
                members,
                current,
                baseline,
                accuracies=(before.accuracy, now.accuracy),
            )
        )
    for comparison in comparisons:
        comparison.failed = _fails(comparison, settings)
    return GateResult(settings=settings, comparisons=comparisons, common_only=common_only)


def evaluate_gate(
    scores: Scores,
    verdicts: dict[str, bool],
    baseline: dict[str, bool] | None,
    settings: GateSettings,
    thresholds: tuple[tuple[str, float], ...] = (),
    common_only: bool = False,
    incomplete: list[str] | None = None,
    allow_incomplete: bool = False,
) -> GateResult | None:
    """The gate's decision, or ``None`` when the run has neither a baseline nor thresholds."""
    if baseline is None and not thresholds:
        return None
    if baseline is not None:
        gate = compare(verdicts, baseline, settings, common_only=common_only)
    else:
        gate = GateResult(settings=settings, comparisons=[])
    return gate.model_copy(
        update={
            "threshold_failures": threshold_failures(scores, thresholds),
            "incomplete": list(incomplete or []),
            "allow_incomplete": allow_incomplete,
        }
    )


def threshold_failures(scores: Scores, thresholds: tuple[tuple[str, float], ...]) -> list[str]:
    failures = []
    for name, minimum in thresholds:
        if name == "overall":
            accuracy = scores.overall.accuracy
        elif name in scores.groups:
            accuracy = scores.groups[name].accuracy
        else:
            cat = scores.categories.get(name)
            accuracy = cat.accuracy if cat is not None else None
        if accuracy is None:
            failures.append(f"{name}: not run, so the minimum of {minimum:.2f}% cannot be checked")
        elif accuracy * 100 < minimum:
            failures.append(f"{name}: {accuracy * 100:.2f}% is below the minimum of {minimum:.2f}%")
    return failures


def _comparison(
    name: str,
    kind: Literal["category", "group", "overall"],
    ids: list[str],
    current: dict[str, bool],
    baseline: dict[str, bool],
    accuracies: tuple[float, float] | None = None,
) -> Comparison:
    regressions = sorted((i for i in ids if baseline[i] and not current[i]), key=natural_key)
    improvements = sorted((i for i in ids if current[i] and not baseline[i]), key=natural_key)
    if accuracies is None:
        accuracies = (
            sum(baseline[i] for i in ids) / len(ids),
            sum(current[i] for i in ids) / len(ids),
        )
    return Comparison(
        name=name,
        kind=kind,
        paired=len(ids),
        baseline_accuracy=accuracies[0],
        current_accuracy=accuracies[1],
        regressions=regressions,
        improvements=improvements,
        p_value=mcnemar_exact(len(regressions), len(improvements)),
    )


def _fails(comparison: Comparison, settings: GateSettings) -> bool:
    if settings.mode == "off":
        return False
    if settings.mode == "any":
        return bool(comparison.regressions)
    return comparison.drop_points >= settings.min_drop and comparison.p_value < settings.alpha
