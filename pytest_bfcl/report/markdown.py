"""A Markdown summary for pull-request pages (written to ``$GITHUB_STEP_SUMMARY`` when set)."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.gate import GateResult
from pytest_bfcl.report.render import percent
from pytest_bfcl.scores.models import Scores
from pytest_bfcl.wording import count, signed


def markdown_summary(
    scores: Scores, metadata: dict[str, Any], gate: GateResult | None, html: str | None = None
) -> str:
    """``html``: the file name of the run's HTML report, pointed to for the details."""
    lines = [
        f"### BFCL V4: `{metadata.get('model')}` ({metadata.get('mode')})",
        "",
    ]
    if scores.partial_eval:
        lines += ["Scored as the leaderboard's `--partial-eval` (entries present only).", ""]
    if metadata.get("sample"):
        lines += [f"Sample: {metadata['sample']} (seed {metadata.get('seed')}).", ""]
    compared = {c.name: c for c in gate.comparisons if c.kind == "category"} if gate else {}
    if compared:
        lines += [
            "| category | baseline | current | change | p-value | regressed |",
            "|---|---:|---:|---:|---:|---:|",
        ]
    else:
        lines += ["| category | correct | total | accuracy |", "|---|---:|---:|---:|"]
    for name, cat in scores.categories.items():
        c = compared.get(name)
        if compared and c:
            mark = " :x:" if c.failed else ""
            lines.append(
                f"| {name}{mark} | {percent(c.baseline_accuracy).strip()} | "
                f"{percent(c.current_accuracy).strip()} | {signed(-c.drop_points)} | "
                f"{c.p_value:.3g} | {len(c.regressions)} |"
            )
        elif compared:
            lines.append(f"| {name} | n/a | {percent(cat.accuracy).strip()} | | | |")
        else:
            lines.append(
                f"| {name} | {cat.correct} | {cat.total} | {percent(cat.accuracy).strip()} |"
            )
    exec_summary = scores.groups.get("exec_summary")
    if exec_summary is not None and exec_summary.accuracy is not None:
        lines += [
            "",
            f"Exec Summary (legacy executable categories): {percent(exec_summary.accuracy)}",
        ]
    overall = scores.overall
    if scores.partial:
        lines += [
            "",
            f"Overall: not computed ({len(overall.missing)} of its categories not run; the "
            "leaderboard formula with them as 0 gives "
            f"{percent(overall.reference_accuracy).strip()})",
        ]
    else:
        lines += ["", f"Overall: **{percent(overall.accuracy).strip()}**"]
    if gate is not None:
        lines += ["", f"Gate ({gate.settings.mode}): **{gate.verdict}**"]
        lines += [f"- {reason}" for reason in gate_reasons(gate)]
    if html:
        lines += [
            "",
            f"Every entry, with its output and the checker's reasons: `{html}` "
            "(the HTML report; open it from the run's artifacts).",
        ]
    return "\n".join(lines) + "\n"


def gate_reasons(gate: GateResult) -> list[str]:
    reasons = [
        f"{c.label}: {c.baseline_accuracy * 100:.2f}% -> {c.current_accuracy * 100:.2f}% "
        f"({signed(-c.drop_points)} points, p={c.p_value:.3g}, {len(c.regressions)} regressed)"
        for c in gate.comparisons
        if c.failed
    ]
    incomplete = [f"incomplete: {line}" for line in gate.incomplete]
    notes = []
    if gate.family and gate.settings.mode == "significant":
        notes.append(
            f"{count(gate.family, 'comparison')} held to one false-alarm rate of "
            f"{gate.settings.alpha:.0%} (Holm)"
        )
    if gate.known_errors:
        notes.append(
            f"{count(len(gate.known_errors), 'entry', 'entries')} with a known ground-truth "
            "error left out of the gate"
        )
    return reasons + gate.threshold_failures + incomplete + notes
