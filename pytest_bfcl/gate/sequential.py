"""The sequential gate (``--bfcl-sequential``): a run that starts from a small stratified
sample and extends itself, stage by stage, only while the gate's evidence is ambiguous.

The stages are nested samples of every category, fixed by the seed before anything is asked
(:data:`STAGES`: 10 %, 30 %, then the whole selection). After each stage but the last the
ordinary gate is computed on the entries asked so far; every comparison (category, gated group,
overall) gets an interim score ``z = Phi^-1(1 - p)`` from its one-sided p-value. The run stops,
and the gate passes, when every comparison is *clearly fine*: ``z`` below the stage's futility
bound for its kind (:data:`FUTILITY`) and no comparison failing. Otherwise it asks the next
stage. At the last stage the decision is the ordinary gate at level ``alpha`` on the last
stage's entries.

Early stops only accept. The gate can therefore fail only when the run reached the last stage
and the ordinary gate on its fixed set of entries failed: the chance that an unchanged model
fails the sequential gate is at most the chance that it fails the ordinary gate on the last
stage's entries, which is at most ``alpha`` (docs/gate-statistics.md gives the argument). The
bounds trade cost against power and were tuned by simulation (``benchmarks/gate_power.py
--sequential``) on the single-turn and multi-turn categories with a 10 % flaky model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel

from pytest_bfcl.gate.decision import Comparison, GateResult, Verdicts, as_rate, compare
from pytest_bfcl.gate.detection import Detection, detection_summary
from pytest_bfcl.gate.permutation import Stratum, permutation_test
from pytest_bfcl.settings import GateSettings
from pytest_bfcl.wording import count

# Each stage's share of every category (nested: a stage holds the entries of those before it).
STAGES: tuple[float, ...] = (0.1, 0.3, 1.0)

# Per stage before the last, the interim z below which a comparison is clearly fine, by kind.
# All entries pooled (unweighted) see a drop spread over many categories earliest, so theirs
# is the lowest bound; a category, group or the overall goes on only when it already looks
# bad (about p < 0.1 after the first stage, p < 0.023 after the second). Tuned by simulation
# (docs/gate-statistics.md, "The sequential gate"): lower bounds ask more and miss less.
FUTILITY: dict[str, tuple[float, ...]] = {
    "overall": (1.3, 2.0),
    "group": (1.3, 2.0),
    "category": (1.3, 2.0),
    "entries": (0.5, 1.3),
}

_NORMAL = NormalDist()
# p-values this close to 0 or 1 are read as these (an interim z of about +-7).
_P_FLOOR = 1e-12


class Ambiguous(BaseModel):
    """A comparison that is not clearly fine at a stage: its name, p-value and bound."""

    name: str
    kind: Literal["category", "group", "overall", "entries"]
    p_value: float
    z: float
    bound: float
    failing: bool = False  # it fails the ordinary gate on the entries asked so far

    def phrase(self) -> str:
        if self.failing:
            return f"{self.name} p={self.p_value:.2g} failing so far"
        # the pooled signal is no comparison of the gate: worse, but it can fail nothing
        if self.kind == "entries" and self.p_value < 0.05:
            return f"{self.name} p={self.p_value:.2g} worse so far"
        return f"{self.name} p={self.p_value:.2g} ambiguous"


class StageDecision(BaseModel):
    """What the run does after a stage: stop (the gate passes, or it is the last stage) or
    extend to the next one, and why."""

    stage: int  # 1-based
    stages: int
    stop: bool
    ambiguous: list[Ambiguous] = []

    @property
    def last(self) -> bool:
        return self.stage >= self.stages


class StageCost(BaseModel):
    """How much of the selection a stage holds, counted cumulatively."""

    entries: int
    queries: int  # the kinds' expected requests (a multi-turn entry counts its turns)


class SequentialRecord(BaseModel):
    """What a sequential run asked and why it stopped, for the reports."""

    stages: list[float]  # each stage's share of every category
    reached: int  # the stage the run stopped after (1-based)
    costs: list[StageCost]  # per stage, cumulative
    full: StageCost  # the whole selection
    reason: str

    @property
    def asked(self) -> StageCost:
        return self.costs[self.reached - 1]

    @property
    def share(self) -> float:
        """The share of the whole selection's queries the run asked."""
        return self.asked.queries / self.full.queries if self.full.queries else 1.0

    def summary(self) -> str:
        asked = self.asked
        return (
            f"stopped after stage {self.reached} of {len(self.stages)}: asked {asked.entries:,} of "
            f"{count(self.full.entries, 'entry', 'entries')}, {asked.queries:,} of "
            f"{count(self.full.queries, 'query', 'queries')} "
            f"({self.share:.0%} of the full selection's); {self.reason}"
        )


def interim_z(p_value: float) -> float:
    """The one-sided p-value as a standard normal score (large when the run looks worse)."""
    p = min(max(p_value, _P_FLOOR), 1 - _P_FLOOR)
    return _NORMAL.inv_cdf(1 - p)


def bound_for(kind: str, stage: int, futility: dict[str, tuple[float, ...]] = FUTILITY) -> float:
    """The futility bound of a comparison of this kind after ``stage`` (1-based)."""
    bounds = futility[kind]
    return bounds[min(stage, len(bounds)) - 1]


def decide_stage(
    gate: GateResult,
    stage: int,
    stages: int,
    futility: dict[str, tuple[float, ...]] = FUTILITY,
    pooled_p: float | None = None,
) -> StageDecision:
    """After ``stage`` of ``stages``: stop when it is the last one, or when every comparison
    of the gate on the entries asked so far is clearly fine, and so is ``pooled_p`` (the
    unweighted comparison of every entry asked, when given); else extend."""
    if stage >= stages:
        return StageDecision(stage=stage, stages=stages, stop=True)
    ambiguous = [a for c in gate.comparisons if (a := _ambiguity(c, stage, futility)) is not None]
    if pooled_p is not None:
        z, bound = interim_z(pooled_p), bound_for("entries", stage, futility)
        if z >= bound:
            ambiguous.append(
                Ambiguous(name="all entries", kind="entries", p_value=pooled_p, z=z, bound=bound)
            )
    return StageDecision(stage=stage, stages=stages, stop=not ambiguous, ambiguous=ambiguous)


def pooled_p_value(current: Verdicts, baseline: Verdicts, exclude: Iterable[str] = ()) -> float:
    """The one-sided p-value of every entry both runs scored, each weighing the same: the
    interim signal of a drop spread thin over many categories (it decides only whether the
    run goes on, never a failure)."""
    left_out = set(exclude)
    pairs = [
        (as_rate(baseline[i]), as_rate(current[i]))
        for i in current
        if i in baseline and i not in left_out
    ]
    return permutation_test([Stratum(1.0, pairs)]).p_value


def decide_interim(
    current: Verdicts,
    baseline: Verdicts,
    settings: GateSettings,
    stage: int,
    stages: int,
    exclude: Iterable[str] = (),
) -> StageDecision:
    """The decision after a stage, from the gate on the entries scored so far."""
    if stage >= stages:
        return StageDecision(stage=stage, stages=stages, stop=True)
    gate = compare(current, baseline, settings, exclude=exclude)
    pooled = pooled_p_value(current, baseline, exclude)
    return decide_stage(gate, stage, stages, pooled_p=pooled)


def _ambiguity(
    comparison: Comparison, stage: int, futility: dict[str, tuple[float, ...]]
) -> Ambiguous | None:
    z = interim_z(comparison.p_value)
    bound = bound_for(comparison.kind, stage, futility)
    if z < bound and not comparison.failed:
        return None
    return Ambiguous(
        name=comparison.name,
        kind=comparison.kind,
        p_value=comparison.p_value,
        z=z if math.isfinite(z) else 0.0,
        bound=bound,
        failing=comparison.failed,
    )


def extension_line(decision: StageDecision, adding: StageCost, shown: int = 3) -> str:
    """``stage 2 of 3: simple_python p=0.08 ambiguous, asking 300 more entries (410 queries)``:
    the progress line when the run extends."""
    worst = sorted(decision.ambiguous, key=lambda a: a.p_value)
    named = ", ".join(a.phrase() for a in worst[:shown])
    more = f" and {len(worst) - shown} more" if len(worst) > shown else ""
    return (
        f"bfcl: stage {decision.stage + 1} of {decision.stages}: {named}{more}, asking "
        f"{count(adding.entries, 'more entry', 'more entries')} "
        f"({count(adding.queries, 'query', 'queries')})"
    )


def sequential_plan(
    stages: tuple[float, ...], costs: list[StageCost], found: list[Detection]
) -> list[str]:
    """The header lines of a sequential run: its stages and what its last stage detects."""
    shares = ", ".join(f"{s:.0%}" for s in stages)
    asked = ", ".join(
        f"{count(c.entries, 'entry', 'entries')}/{count(c.queries, 'query', 'queries')}"
        for c in costs
    )
    lines = [
        f"bfcl sequential gate: stages of {shares} of each category ({asked}); it asks the "
        "next stage only while a comparison is ambiguous, and stops early only to pass"
    ]
    return [*lines, detection_summary(found, "its last stage")]


def stop_reason(decision: StageDecision) -> str:
    """Why a sequential run stopped where it did."""
    if not decision.last:
        return "every comparison was clearly fine (the gate passes; later stages not needed)"
    if decision.stages == 1:
        return "a single stage: the ordinary gate decides"
    return "not every comparison was clearly fine before it, so the ordinary gate decides here"
