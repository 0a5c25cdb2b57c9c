"""Whether a run scored everything it was asked to: the part of the verdict that says what is
missing, per category, in a few readable lines.

A gate that compares only what happened to be scored can be fooled by a run that scored
little (a result file missing, most entries errored, a thinned baseline). With a baseline or
thresholds, an incomplete run therefore fails the gate unless ``--bfcl-allow-incomplete`` says
otherwise, and every report says it was incomplete.
"""

from __future__ import annotations

from pytest_bfcl.scores.models import CategoryScore, Scores
from pytest_bfcl.wording import count, top_reason

__all__ = ["describe_missing", "incompleteness", "missing_by_category", "top_reason"]

# Categories named in one message before the rest are counted.
SHOWN_CATEGORIES = 8


def missing_by_category(scores: Scores) -> dict[str, CategoryScore]:
    return {name: cat for name, cat in scores.categories.items() if cat.missing}


def describe_missing(name: str, cat: CategoryScore) -> str:
    """``live_multiple: 36 of 1053 not scored (36 skipped: no stored result ...)``."""
    parts = []
    if cat.skipped:
        reason = top_reason(cat.skip_reasons)
        parts.append(f"{cat.skipped} skipped" + (f": {reason}" if reason else ""))
    if cat.errors:
        parts.append(count(cat.errors, "error"))
    if cat.not_run:
        parts.append(f"{cat.not_run} not run")
    detail = f" ({'; '.join(parts)})" if parts else ""
    return f"{name}: {cat.missing} of {cat.expected} not scored{detail}"


def incompleteness(scores: Scores, unpaired: list[str] | None = None) -> list[str]:
    """One line per problem; empty when the run is complete."""
    missing = missing_by_category(scores)
    lines = [describe_missing(name, cat) for name, cat in list(missing.items())[:SHOWN_CATEGORIES]]
    if len(missing) > SHOWN_CATEGORIES:
        rest = list(missing.values())[SHOWN_CATEGORIES:]
        lines.append(
            f"and {count(len(rest), 'more category', 'more categories')} with "
            f"{count(sum(c.missing for c in rest), 'entry', 'entries')} not scored"
        )
    if unpaired:
        shown = ", ".join(unpaired[:5])
        if len(unpaired) > 5:
            shown += f" and {len(unpaired) - 5} more"
        lines.append(
            f"{count(len(unpaired), 'entry', 'entries')} scored now "
            f"{'has' if len(unpaired) == 1 else 'have'} no verdict in the baseline ({shown}); "
            "record the baseline again from a complete run"
        )
    return lines
