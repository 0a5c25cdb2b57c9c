"""The HTML report's static part, painted before any script runs: the header with the gate's
verdict, the score table (categories and groups, with the gate's comparisons) and the entry
lists' skeleton."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from html import escape
from typing import Any

from pytest_bfcl.dataset.groups import BY_NAME, DISPLAY_ORDER, shown
from pytest_bfcl.gate import Comparison, GateResult
from pytest_bfcl.report.markdown import gate_reasons
from pytest_bfcl.report.render import model_inputs
from pytest_bfcl.scores.models import CategoryScore, GroupScore, Scores
from pytest_bfcl.wording import count, signed

_SURROGATE = re.compile("[\ud800-\udfff]")


def html_text(value: Any) -> str:
    """Escaped text for HTML, with lone surrogates replaced (they cannot be written as UTF-8)."""
    return escape(_SURROGATE.sub("\ufffd", str(value)))


def _percent(value: float | None) -> str:
    return "not run" if value is None else f"{value * 100:.2f}%"


def gate_verdict(gate: GateResult | None) -> tuple[str, str]:
    """(word, css class) of the gate's decision: passed, FAILED, incomplete or no gate."""
    if gate is None:
        return "no gate", "neutral"
    only_incomplete = not gate.threshold_failures and not any(c.failed for c in gate.comparisons)
    if gate.incomplete and only_incomplete:
        return ("passed (incomplete)" if gate.allow_incomplete else "incomplete"), "warn"
    if not gate.failed and gate.settings.mode == "off":
        return "off (not enforced)", "neutral"
    return ("FAILED", "bad") if gate.failed else ("passed", "good")


def header_html(metadata: dict[str, Any], gate: GateResult | None, scores: Scores) -> str:
    word, css = gate_verdict(gate)
    dataset = metadata.get("dataset") or {}
    when = metadata.get("finished_at") or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    facts = [
        ("mode", metadata.get("mode")),
        ("dataset", f"bfcl-eval {dataset.get('version')}"),
        ("when", when),
        ("plugin", metadata.get("plugin_version")),
    ]
    if metadata.get("wire_format"):  # the route the model was asked on (and handler family)
        facts.append(("asked over", metadata["wire_format"]))
    if metadata.get("leaderboard_note"):
        facts.append(("leaderboard", metadata["leaderboard_note"]))
    if metadata.get("sample"):
        facts.append(("sample", f"{metadata['sample']} (seed {metadata.get('seed')})"))
    if metadata.get("sequential_summary"):  # --bfcl-sequential: what ran and why it stopped
        facts.append(("sequential gate", str(metadata["sequential_summary"])))
    before = metadata.get("compared_with")  # two stored runs (python -m pytest_bfcl.compare)
    if isinstance(before, dict):
        facts.append(("compared with", f"{before.get('model')}, {before.get('finished_at')}"))
    if scores.partial_eval:
        facts.append(("scoring", "--bfcl-partial-eval (entries present only)"))
    if metadata.get("extra_body"):
        fields = json.dumps(metadata["extra_body"], sort_keys=True, ensure_ascii=False)
        facts.append(("request fields", f"{fields[:300]} (not comparable to the leaderboard)"))
    if metadata.get("leaderboard_deviations"):
        shown = "; ".join(map(str, metadata["leaderboard_deviations"]))
        facts.append(("not comparable to the leaderboard", shown))
    if inputs := model_inputs(metadata):
        facts.append(("model inputs", ", ".join(f"{k} ({v})" for k, v in inputs.items())))
    if metadata.get("model_revision"):
        facts.append(("model revision", metadata["model_revision"]))
    for line in metadata.get("settings_changes") or []:
        facts.append(("settings changed on purpose", str(line)))
    missing = len(scores.overall.missing)
    overall = (
        f"not computed ({missing} of its categories not run; "
        f"{_percent(scores.overall.reference_accuracy)} with them as 0)"
        if scores.partial
        else _percent(scores.overall.accuracy)
    )
    reasons = gate_reasons(gate) if gate is not None else []
    lines = [
        "<header>",
        f'<h1>BFCL V4 &middot; <span class="model">{html_text(metadata.get("model"))}</span></h1>',
        '<p class="facts">'
        + " &middot; ".join(f"{html_text(k)}: <b>{html_text(v)}</b>" for k, v in facts)
        + "</p>",
        f'<p class="verdict"><span id="gate-verdict" class="badge {css}">gate: {html_text(word)}'
        f"</span> overall: <b>{html_text(overall)}</b></p>",
    ]
    if reasons:
        lines.append(gate_reasons_html(reasons))
    lines.append("</header>")
    return "\n".join(lines)


def gate_reasons_html(reasons: list[str], shown: int = 4) -> str:
    """The first few reasons, the rest folded (a failed nightly run can list dozens)."""
    items = [f"<li>{html_text(r)}</li>" for r in reasons]
    html = '<ul class="gate-reasons">' + "".join(items[:shown]) + "</ul>"
    if len(items) > shown:
        html += (
            f'<details class="more-reasons"><summary>{len(items) - shown} more reasons'
            '</summary><ul class="gate-reasons">' + "".join(items[shown:]) + "</ul></details>"
        )
    return html


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def scores_html(scores: Scores, gate: GateResult | None) -> str:
    comparisons = gate.comparisons if gate is not None else []
    # Looked up by kind and name (a group's name is never a category's, but a row is one kind)
    by_category = {c.name: c for c in comparisons if c.kind == "category"}
    by_group = {c.name: c for c in comparisons if c.kind != "category"}
    gated = bool(comparisons)
    samples = max((c.samples for c in scores.categories.values()), default=1)
    head = ["category", "correct", "total", "accuracy", "95% CI"]
    if samples > 1:
        head = ["category", "entries", "mean", "95% CI", f"pass^{samples}", f"pass@{samples}"]
        head.append("flaky")
    head.append("notes")
    compared_head = ["baseline", "change", "p-value", "detects (measured)", "regressed"]
    compared_head.append("flaky before")
    compared_head.append("improved")
    if gated:
        head += compared_head
    rows = [
        _category_row(name, cat, by_category.get(name), gated, samples)
        for name, cat in scores.categories.items()
    ]
    ran = {name for name, cat in scores.categories.items() if cat.total}
    group_rows = [
        _group_row(BY_NAME[key].label, scores.groups[key], by_group.get(key), gated, samples)
        for key in DISPLAY_ORDER
        if key in scores.groups and shown(key, ran)
    ]
    group_rows.append(
        _group_row("Overall (V4)", scores.overall, by_group.get("overall"), gated, samples, True)
    )
    group_head = ["group", "score", "95% CI", "notes"] + (compared_head if gated else [])
    return "\n".join(
        [
            '<section id="scores" class="panel"><h2>Scores</h2>',
            '<table class="scores"><thead><tr>'
            + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>",
            *rows,
            "</tbody></table>",
            '<table class="scores groups"><thead><tr>'
            + "".join(f"<th>{h}</th>" for h in group_head)
            + "</tr></thead><tbody>",
            *group_rows,
            "</tbody></table>",
            "</section>",
        ]
    )


def _interval_cell(interval: tuple[float, float] | None) -> str:
    text = "" if interval is None else f"{interval[0] * 100:.1f}-{interval[1] * 100:.1f}%"
    return f'<td class="num">{text}</td>'


def _category_notes(cat: CategoryScore) -> list[str]:
    notes = []
    if cat.accuracy is None:
        notes.append("not run")
    if cat.skipped or cat.excluded:
        notes.append(f"{cat.skipped + cat.excluded} skipped")
    if cat.errors:
        notes.append(_plural(cat.errors, "error"))
    if cat.missing:
        notes.append(f"{cat.missing} missing")
    if cat.tool_failures:  # as the terminal's table says it: answers made without working tools
        search, fetch = cat.tool_failures.get("search", 0), cat.tool_failures.get("fetch", 0)
        notes.append(
            f"web tools failed: {count(search, 'search', 'searches')}, "
            f"{count(fetch, 'fetch', 'fetches')}"
        )
    if cat.sampled_from is not None and cat.ci_low is not None and cat.ci_high is not None:
        notes.append(
            f"sample of {cat.sampled_from}, 95% CI {cat.ci_low * 100:.1f}-{cat.ci_high * 100:.1f}"
        )
    elif not cat.complete and cat.accuracy is not None:
        notes.append(f"partial: {cat.total}/{cat.dataset_size}")
    return notes


_DETECTS_TITLE = "measured in this comparison: the smallest drop in points it finds with 80% power"


def _comparison_cells(comparison: Comparison | None, gated: bool) -> str:
    if not gated:
        return ""
    if comparison is None:
        return '<td class="num">n/a</td>' + "<td></td>" * 6
    change = round(-comparison.drop_points, 2) + 0.0  # never "-0.00"
    css = "bad" if comparison.failed else ("down" if change < 0 else "")
    detects = "none" if comparison.detectable_drop is None else f"{comparison.detectable_drop:.2f}"
    return (
        f'<td class="num">{_percent(comparison.baseline_accuracy)}</td>'
        f'<td class="num {css}">{signed(change)}</td>'
        f'<td class="num">{comparison.p_value:.3g}</td>'
        f'<td class="num" title="{_DETECTS_TITLE}">{detects}</td>'
        f'<td class="num">{len(comparison.regressions)}</td>'
        f'<td class="num">{len(comparison.flaky_before)}</td>'
        f'<td class="num">{len(comparison.improvements)}</td>'
    )


def _category_row(
    name: str, cat: CategoryScore, comparison: Comparison | None, gated: bool, samples: int
) -> str:
    failed = comparison is not None and comparison.failed
    mark = ' <span class="badge bad">gate failed</span>' if failed else ""
    if samples > 1:
        figures = (
            f'<td class="num">{cat.total}</td><td class="num">{_percent(cat.accuracy)}</td>'
            f'{_interval_cell(cat.ci95)}<td class="num">{_percent(cat.pass_all)}</td>'
            f'<td class="num">{_percent(cat.pass_any)}</td><td class="num">{cat.flaky}</td>'
        )
    else:
        figures = (
            f'<td class="num">{cat.correct}</td><td class="num">{cat.total}</td>'
            f'<td class="num">{_percent(cat.accuracy)}</td>{_interval_cell(cat.ci95)}'
        )
    return (
        f'<tr data-category="{html_text(name)}"><td><a href="#" class="cat-link" '
        f'data-category="{html_text(name)}">{html_text(name)}</a>{mark}</td>{figures}'
        f"<td>{html_text(', '.join(_category_notes(cat)))}</td>"
        f"{_comparison_cells(comparison, gated)}</tr>"
    )


def _group_row(
    label: str,
    group: GroupScore,
    comparison: Comparison | None,
    gated: bool,
    samples: int = 1,
    overall: bool = False,
) -> str:
    notes = []
    if samples > 1 and group.accuracy is not None:
        notes.append(
            f"pass^{samples} {_percent(group.pass_all)}, pass@{samples} "
            f"{_percent(group.pass_any)}, {group.flaky} flaky"
        )
    if group.accuracy is None:
        if overall:
            notes.append(f"{_percent(group.reference_accuracy)} with not-run as 0")
        if group.missing:
            more = f" +{len(group.missing) - 6}" if len(group.missing) > 6 else ""
            notes.append("not (fully) run: " + ", ".join(group.missing[:6]) + more)
    if group.sampled is not None:
        notes.append(f"sample: {group.sampled[0]} of {group.sampled[1]}")
    shown = "partial" if overall and group.accuracy is None else _percent(group.accuracy)
    css = ' class="overall"' if overall else ""
    return (
        f'<tr{css}><td>{html_text(label)}</td><td class="num">{html_text(shown)}</td>'
        f"{_interval_cell(group.ci95)}"
        f"<td>{html_text('; '.join(notes))}</td>{_comparison_cells(comparison, gated)}</tr>"
    )


def entries_skeleton_html(count: int) -> str:
    """The entries panel's fixed parts; the script fills the lists."""
    return f"""<section id="entries" class="panel">
<h2>Entries <span class="muted">({count})</span></h2>
<noscript><p>The entry browser needs JavaScript.</p></noscript>
<div class="browser">
<nav id="categories" aria-label="categories"></nav>
<div class="list">
<div class="toolbar">
<div id="filters" role="group" aria-label="filters"></div>
<input id="search" type="search" placeholder="search by id" aria-label="search by id">
</div>
<p id="list-status" class="muted"></p>
<ol id="rows"></ol>
<div id="pager"></div>
</div>
</div>
</section>"""
