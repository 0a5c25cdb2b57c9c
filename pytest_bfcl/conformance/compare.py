"""Pairing the evaluator's verdicts with pytest-bfcl's, entry by entry, and rendering it.

Per category: the entries both sides scored (*compared*), how many got the same verdict, and,
among the entries both failed, how many got the same error type. An entry differs when the
verdicts differ, when both failed with different error types, or when pytest-bfcl did not
score an entry the evaluator scored.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.conformance.junit import JunitVerdicts
from pytest_bfcl.conformance.results import StoredResult
from pytest_bfcl.conformance.score_files import EntryVerdict


class EntryDifference(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    category: str
    reference_valid: bool | None
    reference_error_type: str | None
    ours_valid: bool | None  # None: pytest-bfcl did not score it (see note)
    ours_error_type: str | None
    output: str  # the stored output, trimmed
    note: str = ""


class CategoryAgreement(BaseModel):
    category: str
    compared: int = 0
    verdict_agree: int = 0
    both_failed: int = 0
    error_type_agree: int = 0
    not_scored_by_ours: int = 0
    reference_correct: int = 0
    ours_correct: int = 0
    problem: str | None = None  # why the category could not be compared

    @property
    def verdict_agreement(self) -> float | None:
        return 100.0 * self.verdict_agree / self.compared if self.compared else None

    @property
    def error_type_agreement(self) -> float | None:
        return 100.0 * self.error_type_agree / self.both_failed if self.both_failed else None

    @property
    def agrees(self) -> bool:
        return (
            self.problem is None
            and self.not_scored_by_ours == 0
            and self.verdict_agree == self.compared
            and self.error_type_agree == self.both_failed
        )


class Comparison(BaseModel):
    results_dir: str
    model_dir: str
    leaderboard_model: str
    mode: str
    categories: list[CategoryAgreement]
    differences: list[EntryDifference]
    reference_seconds: float | None = None
    ours_seconds: float | None = None

    @property
    def agrees(self) -> bool:
        return bool(self.categories) and all(cat.agrees for cat in self.categories)

    def totals(self) -> CategoryAgreement:
        total = CategoryAgreement(category="all")
        for cat in self.categories:
            for field in (
                "compared",
                "verdict_agree",
                "both_failed",
                "error_type_agree",
                "not_scored_by_ours",
                "reference_correct",
                "ours_correct",
            ):
                setattr(total, field, getattr(total, field) + getattr(cat, field))
        problems = [cat.category for cat in self.categories if cat.problem]
        total.problem = f"not compared: {', '.join(problems)}" if problems else None
        return total

    def as_json(self) -> dict[str, object]:
        """The comparison with each category's percentages spelled out."""
        data = self.model_dump()
        for out, cat in zip(data["categories"], self.categories, strict=True):
            out["verdict_agreement"] = cat.verdict_agreement
            out["error_type_agreement"] = cat.error_type_agreement
        total = self.totals()
        data["total"] = total.model_dump() | {
            "verdict_agreement": total.verdict_agreement,
            "error_type_agreement": total.error_type_agreement,
        }
        data["agrees"] = self.agrees
        return data


def _entry_difference(
    stored: StoredResult, ref: EntryVerdict, ours: EntryVerdict | None, note: str = ""
) -> EntryDifference:
    return EntryDifference(
        id=stored.id,
        category=ref.category,
        reference_valid=ref.valid,
        reference_error_type=ref.error_type,
        ours_valid=None if ours is None else ours.valid,
        ours_error_type=None if ours is None else ours.error_type,
        output=stored.output,
        note=note,
    )


def compare_category(
    category: str,
    stored: list[StoredResult],
    reference: dict[str, EntryVerdict],
    ours: JunitVerdicts,
) -> tuple[CategoryAgreement, list[EntryDifference]]:
    """Agreement on one category and its differing entries, in result-file order."""
    agreement = CategoryAgreement(category=category)
    differences: list[EntryDifference] = []
    for entry in stored:
        ref = reference[entry.id]
        mine = ours.verdicts.get(entry.id)
        if mine is None:
            agreement.not_scored_by_ours += 1
            skipped = ours.not_scored.get(entry.id)
            note = f"not scored by pytest-bfcl: {skipped.reason if skipped else 'no testcase'}"
            differences.append(_entry_difference(entry, ref, None, note))
            continue
        agreement.compared += 1
        agreement.reference_correct += ref.valid
        agreement.ours_correct += mine.valid
        same_verdict = ref.valid == mine.valid
        agreement.verdict_agree += same_verdict
        same_type = True
        if not ref.valid and not mine.valid:
            agreement.both_failed += 1
            same_type = ref.error_type == mine.error_type
            agreement.error_type_agree += same_type
        if not (same_verdict and same_type):
            differences.append(_entry_difference(entry, ref, mine))
    return agreement, differences


def compare_verdicts(
    stored: dict[str, list[StoredResult]],
    reference: dict[str, dict[str, EntryVerdict]],
    ours: JunitVerdicts,
    reference_problems: dict[str, str] | None = None,
) -> tuple[list[CategoryAgreement], list[EntryDifference]]:
    """Every category of the result directory; one the evaluator did not score is reported
    with its problem instead of numbers."""
    problems = reference_problems or {}
    categories: list[CategoryAgreement] = []
    differences: list[EntryDifference] = []
    for category, entries in stored.items():
        if category not in reference:
            problem = problems.get(category, "the evaluator wrote no score file")
            categories.append(CategoryAgreement(category=category, problem=problem))
            continue
        agreement, diffs = compare_category(category, entries, reference[category], ours)
        categories.append(agreement)
        differences.extend(diffs)
    return categories, differences


# -- rendering ------------------------------------------------------------------------------------


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}%"


def _verdict(valid: bool | None, error_type: str | None) -> str:
    if valid is None:
        return "not scored"
    return "pass" if valid else f"fail ({error_type or 'no error type'})"


def _row(cat: CategoryAgreement, width: int) -> str:
    if cat.problem and not cat.compared:
        return f"{cat.category:<{width}}  {cat.problem}"
    return (
        f"{cat.category:<{width}}  {cat.compared:>8}  {_percent(cat.verdict_agreement):>9}  "
        f"{_percent(cat.error_type_agreement):>10}  {cat.reference_correct:>9}  "
        f"{cat.ours_correct:>9}  {cat.not_scored_by_ours:>10}"
    )


def render_comparison(comparison: Comparison) -> str:
    """The table per category, the totals, then every differing entry."""
    cats = [*comparison.categories, comparison.totals()]
    width = max(len(cat.category) for cat in cats)
    lines = [
        f"results: {comparison.results_dir}",
        f"model directory: {comparison.model_dir}   leaderboard model: "
        f"{comparison.leaderboard_model}   mode: {comparison.mode}",
        "",
        f"{'category':<{width}}  {'compared':>8}  {'verdicts':>9}  {'error type':>10}  "
        f"{'ref pass':>9}  {'our pass':>9}  {'not scored':>10}",
    ]
    rule = "-" * len(lines[-1])
    lines += [_row(cat, width) for cat in comparison.categories]
    lines.append(rule)
    lines.append(_row(comparison.totals(), width))
    timings = [
        f"{name} {seconds:.0f} s"
        for name, seconds in (
            ("evaluator", comparison.reference_seconds),
            ("pytest-bfcl", comparison.ours_seconds),
        )
        if seconds is not None
    ]
    if timings:
        lines.append("time: " + ", ".join(timings))
    if comparison.differences:
        lines += ["", f"{len(comparison.differences)} differing entries:"]
        for diff in comparison.differences:
            theirs = _verdict(diff.reference_valid, diff.reference_error_type)
            mine = _verdict(diff.ours_valid, diff.ours_error_type)
            lines.append(f"- {diff.id}: evaluator {theirs}; pytest-bfcl {mine}")
            if diff.note:
                lines.append(f"    {diff.note}")
            lines.append(f"    output: {diff.output}")
    lines.append("")
    lines.append("AGREE" if comparison.agrees else "DIFFER")
    return "\n".join(lines)
