"""Whether a run scored everything it was asked to: the part of the verdict that says what is
missing, per category, in a few readable lines.

A gate that compares only what happened to be scored can be fooled by a run that scored
little (a result file missing, most entries errored, a thinned baseline). With a baseline or
thresholds, an incomplete run therefore fails the gate unless ``--bfcl-allow-incomplete`` says
otherwise, and every report says it was incomplete.
"""

from __future__ import annotations

from pytest_bfcl.report.scores import CategoryScore, Scores

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
        parts.append(f"{cat.errors} errors")
    if cat.not_run:
        parts.append(f"{cat.not_run} not run")
    detail = f" ({'; '.join(parts)})" if parts else ""
    return f"{name}: {cat.missing} of {cat.expected} not scored{detail}"


def top_reason(reasons: dict[str, int], limit: int = 160) -> str:
    """The commonest skip reason, shortened, with how many other reasons there were. Reasons
    often name an entry; a summary must not grow with the number of entries."""
    if not reasons:
        return ""
    reason, _ = max(reasons.items(), key=lambda kv: kv[1])
    if len(reason) > limit:
        reason = reason[: limit - 3] + "..."
    others = len(reasons) - 1
    return reason + (f" (and {others} other reasons)" if others else "")


def incompleteness(scores: Scores, unpaired: list[str] | None = None) -> list[str]:
    """One line per problem; empty when the run is complete."""
    missing = missing_by_category(scores)
    lines = [describe_missing(name, cat) for name, cat in list(missing.items())[:SHOWN_CATEGORIES]]
    if len(missing) > SHOWN_CATEGORIES:
        rest = list(missing.values())[SHOWN_CATEGORIES:]
        lines.append(
            f"and {len(rest)} more categories with {sum(c.missing for c in rest)} entries "
            "not scored"
        )
    if unpaired:
        shown = ", ".join(unpaired[:5])
        if len(unpaired) > 5:
            shown += f" and {len(unpaired) - 5} more"
        lines.append(
            f"{len(unpaired)} entries scored now have no verdict in the baseline ({shown}); "
            "record the baseline again from a complete run"
        )
    return lines
