"""Entries worse than the baseline, settled by the gate.

An entry that passed every baseline sample and fails now is not yet a failure: whether it is
one depends on the gate, which compares whole scores at the end of the run. It is reported as it
finishes as an expected failure "pending the gate"; at the end, the entries behind a failing
comparison become failures (in pytest's counts, its summary line and the junit file) and the
others stay expected failures that say they are within the noise, with their comparison's
p-value. So the exit status, pytest's summary and junit tell the same story.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.groups import BY_NAME
from pytest_bfcl.gate import Comparison, GateResult

# The start of a pending entry's expected-failure reason (and so of its junit message): worse
# than the baseline, or failing in a run gated by thresholds alone (--bfcl-min-score).
PENDING = "worse than the baseline, pending the gate"
PENDING_THRESHOLDS = "fails, pending the gate's thresholds"
PREFIXES = (PENDING, PENDING_THRESHOLDS)

# A failure of a run that records a baseline and compares with nothing: what it records.
RECORDED = "fails, and is recorded so in the new baseline"


def pending_reason(detail: str, thresholds: bool = False) -> str:
    """What an entry pending the gate reports as it finishes."""
    return f"{PENDING_THRESHOLDS if thresholds else PENDING}: {detail}"


def detail_of(reason: str) -> str:
    """The checker's part of a pending reason."""
    reason = reason.removeprefix("reason: ")
    for prefix in PREFIXES:
        reason = reason.removeprefix(prefix)
    return reason.removeprefix(": ")


def is_pending(reason: str) -> bool:
    return reason.removeprefix("reason: ").startswith(PREFIXES)


def threshold_scopes(gate: GateResult) -> dict[str, str]:
    """Per category, the failing threshold whose score it is part of ("*": every category,
    for the overall score). A threshold failure's line starts with its score's name."""
    scopes: dict[str, str] = {}
    for line in gate.threshold_failures:
        name = line.split(":", 1)[0]
        for category in _categories_of(name):
            scopes.setdefault(category, name)
    return scopes


def _categories_of(name: str) -> list[str]:
    if name == "overall":
        return ["*"]
    group = BY_NAME.get(name)
    if group is None:
        return [name]
    return [c for member in group.members for c in _categories_of(member)]


@dataclass(frozen=True)
class Settled:
    """What the gate made of one pending entry."""

    failed: bool
    reason: str  # the failure's message, or the expected failure's new reason


class Settlement:
    """The gate's word on every pending entry: the entries behind its failing comparisons
    (each with the first such comparison: its category's, else a group's, else the
    overall's) fail; the rest are within the noise of their category's comparison."""

    def __init__(self, gate: GateResult | None) -> None:
        self.gate = gate
        self.failing: dict[str, Comparison] = {}
        self.categories: dict[str, Comparison] = {}
        self.thresholds = threshold_scopes(gate) if gate is not None else {}
        for comparison in gate.comparisons if gate is not None else []:
            if comparison.kind == "category":
                self.categories[comparison.name] = comparison
            if comparison.failed:
                for entry_id in comparison.regressions:
                    self.failing.setdefault(entry_id, comparison)

    def settle(self, entry_id: str, reason: str) -> Settled:
        detail = detail_of(reason)
        failing = self.failing.get(entry_id)
        if failing is not None:
            return Settled(True, regression_message(failing, detail))
        if reason.removeprefix("reason: ").startswith(PENDING_THRESHOLDS):
            category = category_of_id(entry_id)
            threshold = self.thresholds.get(category) or self.thresholds.get("*")
            if threshold is not None:
                return Settled(True, f"FAILED threshold {threshold}: {detail}")
            return Settled(False, f"fails, within the thresholds the gate checks: {detail}")
        compared = self.categories.get(category_of_id(entry_id))
        if self.gate is None or compared is None or entry_id not in compared.regressions:
            why = "not compared by the gate (a known ground-truth error, or no gate)"
            return Settled(False, f"worse than the baseline, {why}: {detail}")
        off = " (gate off)" if self.gate.settings.mode == "off" else ""
        return Settled(
            False,
            f"worse than the baseline within the noise{off} ({compared.label}: "
            f"p={compared.p_value:.3g}): {detail}",
        )


def regression_message(comparison: Comparison, detail: str) -> str:
    return (
        f"REGRESSION (passed in the baseline; the gate failed on {comparison.label}, "
        f"p={comparison.p_value:.3g}): {detail}"
    )
