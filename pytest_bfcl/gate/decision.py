"""The regression gate: paired comparison with a baseline, and absolute score thresholds.

For every category, gated group and the overall score, the entries scored in both runs are
paired, each by its pass rate (passes out of the samples asked; one sample is a plain
verdict). Each comparison tests the score difference it prints (a category's mean, a group's or
the overall's leaderboard-weighted mean) with a one-sided permutation test of each entry's pooled
samples (:mod:`~pytest_bfcl.gate.permutation`): exact for a category with any sample counts
on the two sides, conservative for a weighted score, and McNemar's exact test with one sample a
side. All comparisons form one family: Holm's step-down procedure,
counting only comparisons that could still reach significance (Tarone's rule), keeps the
chance that an unchanged model fails any of them at or below ``alpha``. With the default
``significant`` gate a comparison fails when its drop is at least ``min_drop`` points *and* it
is significant in that procedure; ``any`` fails on a single entry that got worse; ``off`` never
fails. docs/gate-statistics.md gives the reasoning, ``benchmarks/gate_power.py`` the
measured rates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, NamedTuple

from pydantic import BaseModel

from pytest_bfcl.dataset.categories import category_of_id, natural_key
from pytest_bfcl.dataset.groups import GATED
from pytest_bfcl.gate.permutation import Stratum, TestResult, permutation_test
from pytest_bfcl.gate.stats import (
    detectable_drop,
    effective_entries,
    holm_tarone,
    mcnemar_exact,
    noise_of_pairs,
    shrunk_noise,
    tarone_count,
)
from pytest_bfcl.scores.aggregate import aggregate_groups, category_weights
from pytest_bfcl.scores.models import CategoryScore, Scores
from pytest_bfcl.settings import GateSettings

__all__ = [
    "Comparison",
    "GateResult",
    "Measured",
    "compare",
    "decide",
    "evaluate_gate",
    "mcnemar_exact",
    "measure",
]


# An entry's verdicts in one run: (passes, samples). A plain bool is one sample.
Rate = tuple[int, int]
Verdicts = Mapping[str, "bool | Rate | list[int]"]


class Comparison(BaseModel):
    name: str
    kind: Literal["category", "group", "overall"]
    paired: int
    baseline_accuracy: float
    current_accuracy: float
    regressions: list[str]  # passed every baseline sample, worse now
    improvements: list[str]  # better now than in the baseline
    # Flaky in the baseline (some samples passed, some failed) and worse now: shown apart
    # from regressions, since the baseline itself did not always pass them.
    flaky_before: list[str] = []
    p_value: float  # one-sided: is the current run worse?
    # The level Holm's procedure held this comparison to (alpha over the comparisons that
    # still counted at its step), and whether it was below it.
    level: float | None = None
    significant: bool = False
    # The smallest drop in points this comparison detects with 80 % power at its level,
    # given its size and the noise it shows; None when no drop can be detected.
    detectable_drop: float | None = None
    failed: bool = False

    @property
    def drop_points(self) -> float:
        return (self.baseline_accuracy - self.current_accuracy) * 100

    @property
    def label(self) -> str:
        """Its name as the reports print it: a group's says it is one."""
        return f"{self.name} (group)" if self.kind == "group" else self.name


class GateResult(BaseModel):
    settings: GateSettings
    comparisons: list[Comparison]
    common_only: bool = False  # compared on the common part of a mismatched baseline
    threshold_failures: list[str] = []
    # What the run was asked to score but did not (see gate/completeness.py); it fails the
    # gate unless the run allowed an incomplete result, and is reported either way.
    incomplete: list[str] = []
    allow_incomplete: bool = False
    # The comparisons in the family whose error rate the gate controls, and how many of them
    # counted at the first step (the others could not reach significance whatever happened).
    family: int = 0
    counted: int = 0
    # Entries with a known ground-truth error left out of the comparison.
    known_errors: list[str] = []

    @property
    def verdict(self) -> str:
        """``FAILED``, ``passed``, or ``off``: with ``--bfcl-gate=off`` nothing passed a gate
        (a drop is shown, not enforced), so the headline never says passed."""
        if self.failed:
            return "FAILED"
        return (
            "off (--bfcl-gate=off: compared, not enforced)"
            if self.settings.mode == "off"
            else "passed"
        )

    @property
    def failed(self) -> bool:
        return (
            bool(self.threshold_failures)
            or any(c.failed for c in self.comparisons)
            or (bool(self.incomplete) and not self.allow_incomplete)
        )


def as_rate(value: bool | Rate | list[int]) -> Rate:
    """An entry's verdicts as (passes, samples)."""
    if isinstance(value, bool):
        return (int(value), 1)
    passes, samples = value
    return (int(passes), int(samples))


def _scores_on(ids: Iterable[str], rates: dict[str, Rate]) -> dict[str, CategoryScore]:
    """Per-category mean pass rates over the given ids (treated as complete categories)."""
    tallies: dict[str, list[float]] = {}
    for entry_id in ids:
        passes, samples = rates[entry_id]
        counts = tallies.setdefault(category_of_id(entry_id), [0.0, 0.0, 0.0])
        counts[0] += passes / samples
        counts[1] += 1
        counts[2] += passes == samples
    return {
        name: CategoryScore(
            accuracy=total_rate / total,
            correct=int(all_pass),
            total=int(total),
            dataset_size=int(total),
            complete=True,
        )
        for name, (total_rate, total, all_pass) in tallies.items()
    }


class Measured(NamedTuple):
    """Every comparison of two runs, before the family's decision: the rows, each test's
    smallest attainable p-value (Tarone's bound), its strata and the categories it is made of,
    and the entries with a known ground-truth error left out."""

    comparisons: list[Comparison]
    smallest: list[float]
    strata: list[list[Stratum]]
    members: list[list[str]]
    known: list[str]


def measure(current: Verdicts, baseline: Verdicts, exclude: Iterable[str] = ()) -> Measured:
    """Every category, gated group and the overall score compared on the entries both runs
    scored (less ``exclude``), each with its one-sided p-value; nothing decided yet."""
    left_out = set(exclude)
    now = {i: as_rate(v) for i, v in current.items() if i not in left_out}
    before = {i: as_rate(v) for i, v in baseline.items() if i not in left_out}
    common = sorted(set(now) & set(before))
    known = sorted(set(exclude) & set(current) & set(baseline), key=natural_key)
    by_category: dict[str, list[str]] = {}
    for entry_id in common:
        by_category.setdefault(category_of_id(entry_id), []).append(entry_id)
    # Each comparison's strata: (category, its weight in the compared score).
    plans: list[tuple[str, Literal["category", "group", "overall"], dict[str, float]]] = [
        (name, "category", {name: 1.0}) for name in by_category
    ]
    current_groups = aggregate_groups(_scores_on(common, now), sized_by_run=True)
    baseline_groups = aggregate_groups(_scores_on(common, before), sized_by_run=True)
    weights = category_weights(_scores_on(common, now), (*GATED, "overall"))
    accuracies: dict[str, tuple[float, float]] = {}
    for name in (*GATED, "overall"):
        group_now, group_before = current_groups[name], baseline_groups[name]
        if group_now.accuracy is None or group_before.accuracy is None:
            continue  # a category of the group was not run on both sides
        accuracies[name] = (group_before.accuracy, group_now.accuracy)
        plans.append((name, "overall" if name == "overall" else "group", weights[name]))
    comparisons, tests, strata, names = [], [], [], []
    for name, kind, members in plans:
        parts = {c: (w, by_category[c]) for c, w in members.items()}
        stratified = [
            Stratum(w / len(ids), [(before[i], now[i]) for i in ids]) for w, ids in parts.values()
        ]
        test = permutation_test(stratified)
        ids = [i for _, members_ids in parts.values() for i in members_ids]
        # a group's printed score is its weighted mean; a category's is its own mean
        printed = accuracies.get(name) if kind != "category" else None
        comparisons.append(_comparison(name, kind, ids, now, before, test, printed))
        tests.append(test)
        strata.append(stratified)
        names.append(list(parts))
    return Measured(comparisons, [t.smallest for t in tests], strata, names, known)


def compare(
    current: Verdicts,
    baseline: Verdicts,
    settings: GateSettings,
    common_only: bool = False,
    exclude: Iterable[str] = (),
) -> GateResult:
    """Every category, gated group and the overall score compared on the entries both runs
    scored (less ``exclude``: entries with a known ground-truth error). The comparisons form
    one family: with the ``significant`` gate Holm's procedure (with Tarone's rule) keeps the
    chance that an unchanged model fails any of them at most ``alpha``."""
    measured = measure(current, baseline, exclude)
    counted = decide(measured.comparisons, measured.smallest, measured.strata, settings)
    return GateResult(
        settings=settings,
        comparisons=measured.comparisons,
        common_only=common_only,
        family=len(measured.comparisons),
        counted=counted,
        known_errors=measured.known,
    )


def evaluate_gate(
    scores: Scores,
    verdicts: Verdicts,
    baseline: Verdicts | None,
    settings: GateSettings,
    thresholds: tuple[tuple[str, float], ...] = (),
    common_only: bool = False,
    incomplete: list[str] | None = None,
    allow_incomplete: bool = False,
    exclude: Iterable[str] = (),
) -> GateResult | None:
    """The gate's decision, or ``None`` when the run has neither a baseline nor thresholds."""
    if baseline is None and not thresholds:
        return None
    if baseline is not None:
        gate = compare(verdicts, baseline, settings, common_only=common_only, exclude=exclude)
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
    current: dict[str, Rate],
    baseline: dict[str, Rate],
    test: TestResult,
    accuracies: tuple[float, float] | None = None,
) -> Comparison:
    def lower(a: Rate, b: Rate) -> bool:  # a's pass rate below b's, in integers
        return a[0] * b[1] < b[0] * a[1]

    worse = [i for i in ids if lower(current[i], baseline[i])]
    flaky = {i for i in worse if 0 < baseline[i][0] < baseline[i][1]}
    improvements = sorted((i for i in ids if lower(baseline[i], current[i])), key=natural_key)
    if accuracies is None:
        accuracies = (
            sum(p / k for p, k in (baseline[i] for i in ids)) / len(ids),
            sum(p / k for p, k in (current[i] for i in ids)) / len(ids),
        )
    return Comparison(
        name=name,
        kind=kind,
        paired=len(ids),
        baseline_accuracy=accuracies[0],
        current_accuracy=accuracies[1],
        regressions=sorted((i for i in worse if i not in flaky), key=natural_key),
        flaky_before=sorted(flaky, key=natural_key),
        improvements=improvements,
        p_value=test.p_value,
    )


def decide(
    comparisons: list[Comparison],
    smallest: list[float],
    strata: list[list[Stratum]],
    settings: GateSettings,
) -> int:
    """Holm's procedure over the family (``smallest``: each test's smallest attainable
    p-value, for Tarone's rule), each comparison's detectable drop at the level of the
    procedure's first step, and whether it fails. Returns the comparisons counted at the
    first step."""
    significant, levels = holm_tarone([c.p_value for c in comparisons], smallest, settings.alpha)
    counted = tarone_count(smallest, settings.alpha) if comparisons else 0
    first_level = settings.alpha / max(counted, 1)
    pairs = [
        pair for parts in strata[: _categories(comparisons)] for s in parts for pair in s.pairs
    ]
    pooled = noise_of_pairs(pairs)
    samples = max((k for pair in pairs for _, k in pair), default=1)
    for comparison, parts, is_significant, level in zip(
        comparisons, strata, significant, levels, strict=True
    ):
        comparison.significant = is_significant
        comparison.level = level
        entries, noise = effective_entries(
            [(s.weight, len(s.pairs), shrunk_noise(noise_of_pairs(s.pairs), len(s.pairs), pooled))
             for s in parts]
        )  # fmt: skip
        drop = detectable_drop(
            entries, noise, first_level, samples=samples, min_drop=settings.min_drop / 100
        )
        comparison.detectable_drop = None if drop is None else round(drop * 100, 2)
        comparison.failed = _fails(comparison, settings)
    return counted


def _categories(comparisons: list[Comparison]) -> int:
    """How many comparisons (at the front of the list) are categories."""
    return sum(1 for c in comparisons if c.kind == "category")


def _fails(comparison: Comparison, settings: GateSettings) -> bool:
    if settings.mode == "off":
        return False
    if settings.mode == "any":
        return bool(comparison.regressions or comparison.flaky_before)
    return comparison.drop_points >= settings.min_drop and comparison.significant
