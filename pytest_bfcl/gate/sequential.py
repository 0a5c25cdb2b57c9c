"""The sequential gate (``--bfcl-sequential``): a run that starts from a small stratified
sample of every category and asks more of a category only while a comparison it belongs to
could still hide the drop the full run is built to detect.

**Stages.** Nested samples of every category (:data:`STAGES`: 10 %, 30 %, then the whole
selection), drawn before anything is asked from a seed that changes with the change under test
(the commit; ``--bfcl-seed`` fixes it), so no change can know which entries come first.

**Stopping to pass (futility).** After a stage every comparison the stage completed (category,
gated group, overall) states the drop the full run detects for it with 80 % power
(:func:`target_drop`) and the upper confidence bound on its drop from the entries asked so far,
with the variance a drop of that size concentrated on the fewest entries would give
(:func:`upper_bound`). A comparison whose bound is below its target has ruled that drop out;
any other is ambiguous, and every category it is made of is asked its next stage. A comparison
the full run cannot test at all (too few entries) is never ruled out before its last stage:
small categories extend.

**Stopping to fail (early rejection).** Each comparison's stage-``k`` p-value is read against
a share :data:`SPENDING` of the family's level: its sequential p-value is ``min_k p_k / w_k``
over the stages it completed. Holm's procedure over these is the gate,
after every stage and at the end; the run stops as soon as it fails. By the union bound each
sequential p-value is a valid p-value whatever the stopping rule, so the whole procedure keeps
the level ``alpha`` (docs/gate-statistics.md gives the proof and the measured figures,
``benchmarks/gate_power.py --sequential``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from pytest_bfcl.gate.decision import (
    Comparison,
    GateResult,
    Measured,
    Verdicts,
    decide,
    measure,
)
from pytest_bfcl.gate.detection import Detection, detection_summary
from pytest_bfcl.gate.permutation import Stratum
from pytest_bfcl.gate.stats import (
    detectable_drop,
    effective_entries,
    noise_of_pairs,
    shrunk_noise,
    z_one_sided,
)
from pytest_bfcl.settings import GateSettings
from pytest_bfcl.wording import count

# Each stage's share of every category (nested: a stage holds the entries of those before it).
STAGES: tuple[float, ...] = (0.1, 0.3, 1.0)

# The share of alpha each stage's test spends (they add up to 1): a comparison fails at stage
# k when Holm's procedure holds its p-value over this share below its level. Most goes to the
# last stage, so a full run loses little power to the early looks.
SPENDING: tuple[float, ...] = (0.01, 0.04, 0.95)

# A comparison rules a drop out when its one-sided 90 % upper confidence bound is below it.
RULE_OUT_CONFIDENCE = 0.9


class Ambiguous(BaseModel):
    """A comparison that could still hide its target drop after a stage: its name, the upper
    bound on its drop and the drop the full run detects for it (points; None: no drop the full
    run can detect, so only the whole selection decides)."""

    name: str
    kind: Literal["category", "group", "overall"]
    upper: float | None
    target: float | None

    def phrase(self) -> str:
        if self.target is None or self.upper is None:
            return f"{self.name} too small to rule a drop out"
        return (
            f"{self.name} drop up to {self.upper:.1f} points not ruled out "
            f"(the full run detects {self.target:.1f})"
        )


class StageDecision(BaseModel):
    """What the run does after a stage: stop (it failed, or nothing is ambiguous, or it is the
    last stage) or extend the categories of the ambiguous comparisons."""

    stage: int  # 1-based
    stages: int
    stop: bool
    failed: bool = False  # the gate already fails on the stages asked
    ambiguous: list[Ambiguous] = []
    extend: list[str] = []  # the categories asked at the next stage

    @property
    def last(self) -> bool:
        return self.stage >= self.stages


class StageCost(BaseModel):
    """Entries and queries, counted cumulatively."""

    entries: int
    queries: int  # the kinds' expected requests (a multi-turn entry counts its turns)


class SequentialRecord(BaseModel):
    """What a sequential run asked and why it stopped, for the reports."""

    stages: list[float]  # each stage's share of every category
    spending: list[float]  # each stage's share of alpha
    seed: int  # the stages' seed: --bfcl-seed=SEED reproduces them
    seed_source: str  # where it came from (--bfcl-seed, GITHUB_SHA, git HEAD, this run)
    reached: int  # the last stage the run asked of any category (1-based)
    by_category: dict[str, int]  # per category, the stages it was asked
    asked: StageCost  # what the run asked (entries that ran)
    full: StageCost  # the whole selection (after any narrowing on the command line)
    failed_early: bool = False
    reason: str

    @property
    def share(self) -> float:
        """The share of the whole selection's queries the run asked."""
        return self.asked.queries / self.full.queries if self.full.queries else 1.0

    def report(self) -> dict[str, Any]:
        """The record as the JSON and HTML reports hold it: what was asked, the share of the
        whole selection's queries, and why the run stopped."""
        return {
            **self.model_dump(mode="json"),
            "asked": self.asked.model_dump(mode="json"),
            "share_of_queries": round(self.share, 4),
        }

    def summary(self) -> str:
        asked = self.asked
        full_stage = sum(1 for s in self.by_category.values() if s >= len(self.stages))
        return (
            f"stopped after stage {self.reached} of {len(self.stages)} "
            f"({full_stage} of {count(len(self.by_category), 'category', 'categories')} asked "
            f"whole): asked {asked.entries:,} of {count(self.full.entries, 'entry', 'entries')}, "
            f"{asked.queries:,} of {count(self.full.queries, 'query', 'queries')} "
            f"({self.share:.0%} of the full selection's); "
            f"{self.reason}; stages drawn with seed {self.seed} ({self.seed_source}; "
            f"--bfcl-seed={self.seed} reproduces them); the gate's p-values are each "
            "comparison's best stage p-value over that stage's share of alpha ("
            + "/".join(f"{w:.0%}" for w in self.spending)
            + ")"
        )


class StagedGate(BaseModel):
    """The gate on the stages asked so far, and each comparison's stage-by-stage evidence."""

    gate: GateResult
    # per stage (1-based index - 1): the rows of the comparisons it completed
    looks: list[list[Comparison]]
    # per stage: comparison name -> (its strata's categories, entries asked, noise) for the bound
    strata: list[dict[str, list[tuple[str, float, int, float]]]]


def sequential_p(p_values: Mapping[int, float], spending: tuple[float, ...] = SPENDING) -> float:
    """A comparison's sequential p-value from its p-value at each stage it completed
    (1-based): ``min_k p_k / w_k``, at most 1."""
    if not p_values:
        return 1.0
    return min(1.0, min(p / spending[k - 1] for k, p in p_values.items()))


def target_drop(
    parts: list[tuple[float, int, float]], settings: GateSettings, family: int, samples: int = 1
) -> float | None:
    """The drop (a fraction) the full run detects for a comparison with 80 % power at Holm's
    first step (``alpha / family``), at least ``--bfcl-min-drop``: ``parts`` are per category
    (its weight in the score, its entries in the whole selection, its noise). None: the full
    run detects no drop there."""
    full = [(weight / size, size, noise) for weight, size, noise in parts if size > 0]
    entries, noise = effective_entries(full)
    if entries <= 0:
        return None
    level = settings.alpha / max(family, 1)
    return detectable_drop(entries, noise, level, samples=samples, min_drop=settings.min_drop / 100)


def upper_bound(drop: float, parts: list[tuple[float, int, int, float]], target: float) -> float:
    """The one-sided upper confidence bound (:data:`RULE_OUT_CONFIDENCE`) on a comparison's
    drop over its whole selection, from its weighted drop on the stage's entries. ``parts`` per
    category: (weight in the score, entries asked, entries in the selection, noise). The
    variance is the one the ``target`` drop would give if it sat on the fewest entries (each
    of them now always failing): the noise plus ``target (1 - target)`` per entry, with the
    finite-population correction for the entries not asked, plus the full run's own noise."""
    total = sum(weight for weight, *_ in parts) or 1.0
    spread = target * (1 - target)
    variance = 0.0
    for weight, asked, size, noise in parts:
        share = weight / total
        if asked <= 0:
            continue
        unseen = max(0.0, 1 - asked / size) if size else 0.0
        variance += share**2 * ((noise + spread) * unseen / asked + noise / max(size, 1))
    return drop + z_one_sided(1 - RULE_OUT_CONFIDENCE) * math.sqrt(variance)


def hidden_chance(
    parts: list[tuple[str, float, int, float]], sizes: Mapping[str, int], target: float
) -> float:
    """The chance that a category's stage holds none of the entries of a ``target`` drop
    sitting on the fewest entries (hypergeometric): where it is large, seeing no drop rules
    nothing out, whatever the normal bound says (a handful of entries in a small stage)."""
    chance = 1.0
    for name, _, asked, _ in parts:
        size = sizes.get(name, asked)
        failing = math.ceil(target * size - 1e-9)
        for i in range(asked):
            if size - i <= 0:
                break
            chance *= max(0.0, (size - failing - i) / (size - i))
    return chance


def staged_gate(
    current: Verdicts,
    baseline: Verdicts,
    settings: GateSettings,
    stages: list[dict[str, set[str]]],
    asked: Mapping[str, int],
    exclude: Iterable[str] = (),
    spending: tuple[float, ...] = SPENDING,
) -> StagedGate:
    """The gate of a sequential run: every comparison looked at on each stage it completed
    (a category: each stage it was asked; a group or the overall: each stage all its categories
    were asked), its sequential p-value over those looks, and Holm's procedure over them."""
    left_out = set(exclude)
    looks: list[list[Comparison]] = []
    parts: list[dict[str, list[tuple[str, float, int, float]]]] = []
    latest: dict[str, tuple[Comparison, list[Stratum]]] = {}
    p_by_stage: dict[str, dict[int, float]] = {}
    members_of: dict[str, list[str]] = {}
    for number, stage in enumerate(stages, start=1):
        looked = {c for c, reached in asked.items() if reached >= number}
        ids = {i for c in looked for i in stage.get(c, ())}
        now = {i: v for i, v in current.items() if i in ids}
        if not now:
            looks.append([])
            parts.append({})
            continue
        measured = measure(now, baseline, left_out)
        rows, stage_parts = _looked_rows(measured, members_of, number)
        looks.append([row for row, _, _ in rows])
        parts.append(stage_parts)
        for row, strata, _ in rows:
            p_by_stage.setdefault(row.name, {})[number] = row.p_value
            latest[row.name] = (row, strata)
    order = [name for look in looks for name in (r.name for r in look)]
    names = list(dict.fromkeys(order))
    final = [
        latest[n][0].model_copy(update={"p_value": sequential_p(p_by_stage[n], spending)})
        for n in names
    ]
    # Plain Holm: every comparison counts (Tarone's count would depend on which stages the
    # data chose to ask, which the level's proof cannot allow).
    counted = decide(final, [0.0] * len(final), [latest[n][1] for n in names], settings)
    known = sorted(left_out & set(current) & set(baseline))
    gate = GateResult(
        settings=settings,
        comparisons=final,
        family=len(final),
        counted=counted,
        known_errors=known,
    )
    return StagedGate(gate=gate, looks=looks, strata=parts)


def _looked_rows(
    measured: Measured, members_of: dict[str, list[str]], stage: int
) -> tuple[
    list[tuple[Comparison, list[Stratum], float]], dict[str, list[tuple[str, float, int, float]]]
]:
    """The comparisons a stage completed (its categories the same as on the first stage,
    which asks every category), with their strata and, per comparison, each category's
    (name, weight, entries asked, noise); and each one's smallest attainable p-value."""
    category_pairs = [
        pair
        for row, strata in zip(measured.comparisons, measured.strata, strict=True)
        if row.kind == "category"
        for s in strata
        for pair in s.pairs
    ]
    pooled = noise_of_pairs(category_pairs)
    rows, parts = [], {}
    for row, strata, names, least in zip(
        measured.comparisons, measured.strata, measured.members, measured.smallest, strict=True
    ):
        if stage == 1:
            members_of[row.name] = names
        if sorted(members_of.get(row.name, ())) != sorted(names):
            continue  # a group some of whose categories stopped earlier
        rows.append((row, strata, least))
        parts[row.name] = [
            (
                name,
                s.weight * len(s.pairs),
                len(s.pairs),
                shrunk_noise(noise_of_pairs(s.pairs), len(s.pairs), pooled),
            )
            for name, s in zip(names, strata, strict=True)
        ]
    return rows, parts


def decide_stage(
    staged: StagedGate,
    stage: int,
    sizes: Mapping[str, int],
    settings: GateSettings,
    samples: int = 1,
) -> StageDecision:
    """After ``stage`` of the stages: stop when the gate already fails, when it is the last
    stage, or when every comparison the stage completed rules its target drop out; else
    extend the categories of the comparisons that do not (``sizes``: each category's entries
    in the whole selection)."""
    stages = len(STAGES)
    if staged.gate.failed:
        return StageDecision(stage=stage, stages=stages, stop=True, failed=True)
    if stage >= stages:
        return StageDecision(stage=stage, stages=stages, stop=True)
    family = len(staged.gate.comparisons)
    ambiguous: list[Ambiguous] = []
    extend: set[str] = set()
    for row in staged.looks[stage - 1]:
        parts = staged.strata[stage - 1][row.name]
        if all(asked >= sizes.get(name, 0) for name, _, asked, _ in parts):
            continue  # its whole selection is asked: nothing left to extend
        target = target_drop(
            [(w, sizes.get(n, a), noise) for n, w, a, noise in parts], settings, family, samples
        )
        upper = None
        if target is not None:
            upper = upper_bound(
                row.drop_points / 100,
                [(w, a, sizes.get(n, a), noise) for n, w, a, noise in parts],
                target,
            )
            hidden = hidden_chance(parts, sizes, target) if row.kind == "category" else 0.0
            if upper < target and hidden < 1 - RULE_OUT_CONFIDENCE:
                continue
        ambiguous.append(
            Ambiguous(
                name=row.name,
                kind=row.kind,
                upper=None if upper is None else round(upper * 100, 2),
                target=None if target is None else round(target * 100, 2),
            )
        )
        extend.update(n for n, *_ in parts if sizes.get(n, 0) > 0)
    return StageDecision(
        stage=stage,
        stages=stages,
        stop=not extend,
        ambiguous=ambiguous,
        extend=sorted(extend),
    )


def extension_line(decision: StageDecision, adding: StageCost, shown: int = 3) -> str:
    """``bfcl: stage 2 of 3: simple_java drop up to 9.1 points not ruled out (...), asking 40
    more entries of 3 categories (80 queries)``: the progress line when the run extends."""
    named = ", ".join(a.phrase() for a in decision.ambiguous[:shown])
    more = f" and {len(decision.ambiguous) - shown} more" if len(decision.ambiguous) > shown else ""
    return (
        f"bfcl: stage {decision.stage + 1} of {decision.stages}: {named}{more}, asking "
        f"{count(adding.entries, 'more entry', 'more entries')} of "
        f"{count(len(decision.extend), 'category', 'categories')} "
        f"({count(adding.queries, 'query', 'queries')})"
    )


def sequential_plan(
    stages: tuple[float, ...], costs: list[StageCost], found: list[Detection], seed_line: str
) -> list[str]:
    """The header lines of a sequential run: its stages, their seed, and what the whole
    selection detects."""
    shares = ", ".join(f"{s:.0%}" for s in stages)
    asked = ", ".join(
        f"{count(c.entries, 'entry', 'entries')}/{count(c.queries, 'query', 'queries')}"
        for c in costs
    )
    spent = ", ".join(f"{w:.0%}" for w in SPENDING)
    lines = [
        f"bfcl sequential gate: stages of {shares} of each category ({asked}), {seed_line}; a "
        "category is asked its next stage while a comparison it belongs to cannot rule out the "
        f"drop the full run detects; alpha spent {spent} across the stages (it may fail early)"
    ]
    return [*lines, detection_summary(found, "the whole selection")]


def stop_reason(decision: StageDecision) -> str:
    """Why a sequential run stopped where it did."""
    if decision.failed:
        if decision.last:
            return "the gate fails"
        return "the gate already fails on the stages asked (early rejection)"
    if not decision.last:
        return "every comparison ruled out the drop the full run detects (the gate passes)"
    if decision.stages == 1:
        return "a single stage: the ordinary gate decides"
    return "the last stage asked decides"
