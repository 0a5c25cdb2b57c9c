"""Human-readable renderings: the terminal score table and a failing entry's explanation."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.groups import DISPLAY_ORDER, display_label, shown
from pytest_bfcl.report.completeness import top_reason
from pytest_bfcl.report.entries import bounded
from pytest_bfcl.report.gate import GateResult
from pytest_bfcl.report.scores import GroupScore, Scores


def percent(value: float | None) -> str:
    return "not run" if value is None else f"{value * 100:6.2f}%"


def score_table(scores: Scores, metadata: dict[str, Any]) -> list[str]:
    lines = [
        f"model: {metadata.get('model')}  mode: {metadata.get('mode')}  dataset: "
        f"bfcl-eval {metadata.get('dataset', {}).get('version')}",
        *([str(metadata["leaderboard_note"])] if metadata.get("leaderboard_note") else []),
        *(
            [
                "scoring: --bfcl-partial-eval (each category over the entries present, as the "
                "leaderboard's --partial-eval; missing entries do not count)"
            ]
            if scores.partial_eval
            else []
        ),
        "",
        f"{'category':<26}{'correct':>9}{'total':>7}{'accuracy':>10}  note",
    ]
    for name, cat in scores.categories.items():
        notes = []
        if cat.skipped or cat.excluded:
            reason = top_reason(cat.skip_reasons)
            count = cat.skipped + cat.excluded
            notes.append(f"{count} skipped" + (f" ({reason})" if reason else ""))
        if cat.errors:
            notes.append(f"{cat.errors} errors")
        if cat.not_run:
            notes.append(f"{cat.not_run} not run")
        if cat.tool_failures:
            search, fetch = cat.tool_failures.get("search", 0), cat.tool_failures.get("fetch", 0)
            notes.append(f"web tools failed: {search} searches, {fetch} fetches")
        if cat.sampled_from is not None and cat.ci_low is not None and cat.ci_high is not None:
            notes.append(
                f"sampled: {cat.total} of {cat.sampled_from}, 95% CI "
                f"{_interval(cat.ci_low, cat.ci_high)}"
            )
        elif not cat.complete:
            notes.append(f"partial: {cat.total}/{cat.dataset_size} scored")
        lines.append(
            f"{name:<26}{cat.correct:>9}{cat.total:>7}{percent(cat.accuracy):>10}  "
            + ", ".join(notes)
        )
    lines += ["", f"{'group':<26}{'score':>10}"]
    web_skipped = _web_search_skipped(scores)
    ran = {name for name, cat in scores.categories.items() if cat.total}
    for key in DISPLAY_ORDER:
        if not shown(key, ran):
            continue
        label = display_label(key)
        group = scores.groups[key]
        value = "skipped" if key == "web_search" and web_skipped else percent(group.accuracy)
        lines.append(f"{label:<26}{value:>10}{_sampled_note(group)}")
    overall = scores.overall
    if scores.overall_without_web_search is not None:
        lines.append(
            f"{'Overall (V4)':<26}{'partial':>10}  web search skipped: "
            f"{percent(scores.overall_without_web_search).strip()} with Agentic = Memory "
            f"(leaderboard formula with web search as 0: "
            f"{percent(overall.reference_accuracy).strip()})"
        )
    elif scores.partial:
        lines.append(
            f"{'Overall (V4)':<26}{'partial':>10}  leaderboard formula with not-run categories "
            f"as 0: {percent(overall.reference_accuracy).strip()}; not run: "
            f"{_short_list(overall.missing)}"
        )
    else:
        lines.append(f"{'Overall (V4)':<26}{percent(overall.accuracy):>10}{_sampled_note(overall)}")
    fs = scores.format_sensitivity
    if fs is not None:
        lines.append(
            f"Format sensitivity: max delta {percent(fs.max_delta).strip()}, std "
            f"{percent(fs.std).strip()} over {len(fs.configs)} prompt configs"
        )
    return lines


def _interval(low: float, high: float) -> str:
    return f"{low * 100:.1f}-{high * 100:.1f}%"


def _sampled_note(group: GroupScore) -> str:
    """``  sampled (364 of 4,441 entries), 95% CI 71.2-80.4%`` for a sampled group."""
    if group.sampled is None or group.ci_low is None or group.ci_high is None:
        return ""
    scored, population = group.sampled
    return (
        f"  sampled ({scored:,} of {population:,} entries), 95% CI "
        f"{_interval(group.ci_low, group.ci_high)}"
    )


def _web_search_skipped(scores: Scores) -> bool:
    """Web search was selected but every entry was skipped (web access off)."""
    web = [c for n, c in scores.categories.items() if n.startswith("web_search")]
    return bool(web) and all(c.total == 0 and c.excluded for c in web)


def _short_list(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _compact(value: Any, limit: int = 600) -> str:
    # Bounded while it is built: a model's value may expand to gigabytes when rendered whole.
    if isinstance(value, str):
        return bounded(json.dumps(value[:limit], ensure_ascii=False), limit)
    return bounded(value, limit)


def explain_failure(verdict: Verdict) -> str:
    """A few readable lines: what the model said, what was expected, and why it failed."""
    reasons = [e if isinstance(e, str) else _compact(e, 300) for e in verdict.errors[:4]]
    lines = [
        f"BFCL {verdict.id} [{verdict.category}] failed: {verdict.error_type}",
        *(f"  reason:   {r}" for r in reasons),
    ]
    if verdict.report:  # multi-step categories explain the failing turn themselves
        return "\n".join(lines + verdict.report)
    lines.append(f"  output:   {_compact(verdict.model_output)}")
    if verdict.decoded is not None:
        lines.append(f"  decoded:  {_compact(verdict.decoded)}")
    if verdict.expected is not None:
        lines.append(f"  expected: {_compact(verdict.expected)}")
    return "\n".join(lines)


def gate_block(gate: GateResult, id_limit: int = 10) -> list[str]:
    """The verdict block: each comparison's baseline, current score, change, p-value and flips."""
    settings = gate.settings
    lines = [
        f"gate: {settings.mode} (alpha {settings.alpha}, minimum drop {settings.min_drop} points)"
        + ("; compared on the entries both runs have" if gate.common_only else "")
    ]
    if gate.comparisons:
        lines.append(
            f"{'score':<26}{'baseline':>9}{'current':>9}{'change':>8}{'p-value':>10}"
            f"{'worse':>7}{'better':>7}"
        )
    for c in gate.comparisons:
        name = c.name if c.kind != "group" else f"{c.name} (group)"
        change = round(-c.drop_points, 2) + 0.0  # + 0.0: never "-0.00"
        lines.append(
            f"{name:<26}{c.baseline_accuracy * 100:>8.2f}%{c.current_accuracy * 100:>8.2f}%"
            f"{change:>+8.2f}{c.p_value:>10.3g}{len(c.regressions):>7}"
            f"{len(c.improvements):>7}" + ("  FAILED" if c.failed else "")
        )
    for c in gate.comparisons:
        if c.kind == "category" and c.regressions:
            shown = ", ".join(c.regressions[:id_limit])
            more = len(c.regressions) - id_limit
            label = "regressed" + (" (within noise)" if not c.failed else "")
            lines.append(
                f"{label} in {c.name}: {shown}" + (f" and {more} more" if more > 0 else "")
            )
    lines += [f"threshold: {failure}" for failure in gate.threshold_failures]
    if gate.incomplete:
        verdict = (
            "allowed by --bfcl-allow-incomplete"
            if gate.allow_incomplete
            else "FAILED (pass --bfcl-allow-incomplete to gate on what was scored)"
        )
        lines.append(f"incomplete: {len(gate.incomplete)} problems listed above; {verdict}")
    return lines
