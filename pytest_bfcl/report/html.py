"""The HTML report: one self-contained page to look into every entry of a run.

The header, the score table and the chart are rendered here as static HTML (they paint before
any script runs). The entries travel as data in two ``<script type="application/json">``
elements, with every character that could end the element or confuse a parser escaped, and
gzip + base64 once large (the page inflates them with the browser's ``DecompressionStream``):
a small index (ids, outcomes, flags) that the lists, filters and search use, and the details
(texts, conversations) as JSON Lines, parsed one entry at a time when it is opened. The page's
script builds rows only for the visible page of a list, so a full run (10,000+ entries) stays
light.

Nothing is loaded from the network: the CSS and the script are read from ``html_assets/`` and
inlined, and no font or image outside the file is referenced.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import tempfile
from datetime import datetime, timezone
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.groups import BY_NAME, DISPLAY_ORDER, shown
from pytest_bfcl.report.chart import svg_chart
from pytest_bfcl.report.entries import (
    GZIP_ABOVE,
    INDEX_FIELDS,
    EntryRecord,
    HtmlEntries,
    compact_json,
    script_safe,
)
from pytest_bfcl.report.gate import Comparison, GateResult
from pytest_bfcl.report.markdown import gate_reasons
from pytest_bfcl.report.score_models import CategoryScore, GroupScore, Scores
from pytest_bfcl.report.wording import count, signed

_SURROGATE = re.compile("[\ud800-\udfff]")


def render_html(
    records: list[EntryRecord],
    functions: dict[str, list[dict[str, Any]]],
    scores: Scores,
    gate: GateResult | None,
    metadata: dict[str, Any],
) -> str:
    """The whole page as text, from whole records (UTF-8 safe: lone surrogates in model output
    are escaped in the data and replaced in the static part)."""
    return "".join(page_pieces(collect(records), functions, scores, gate, metadata))


def collect(records: list[EntryRecord]) -> HtmlEntries:
    entries = HtmlEntries()
    for record in records:
        entries.add_record(record)
    return entries


def page_pieces(
    entries: HtmlEntries,
    functions: dict[str, list[dict[str, Any]]],
    scores: Scores,
    gate: GateResult | None,
    metadata: dict[str, Any],
) -> list[str]:
    """The page in pieces, from the entries as gathered during the run."""
    rest = page_data(entries, functions, scores, gate)
    title = f"BFCL V4: {metadata.get('model')} ({metadata.get('mode')})"
    details, packed = entries.details()
    body = "\n".join(
        [
            header_html(metadata, gate, scores),
            '<main id="top">',
            scores_html(scores, gate),
            '<section id="chart" class="panel"><h2>Chart</h2>',
            svg_chart(scores, gate, title),
            "</section>",
            entries_skeleton_html(len(entries)),
            "</main>",
            script_element("bfcl-data", data_json(entries, rest)),
        ]
    )
    return [
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # No network, ever: the page only runs its own inline script and styles.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{_text(title)}</title>\n"
        f"<style>\n{_asset('report.css')}</style>\n"
        f"</head><body>\n{body}\n",
        _element_open("bfcl-details", packed),
        details,
        "</script>",
        f"\n<script>\n{_asset('report.js')}</script>\n</body></html>\n",
    ]


def write_html(
    path: Path,
    records: list[EntryRecord] | HtmlEntries,
    functions: dict[str, list[dict[str, Any]]],
    scores: Scores,
    gate: GateResult | None,
    metadata: dict[str, Any],
) -> None:
    """Write the page atomically (a killed run never leaves half a page), from whole records
    or from the entries gathered during the run."""
    entries = records if isinstance(records, HtmlEntries) else collect(records)
    write_text_atomic(path, page_pieces(entries, functions, scores, gate, metadata))


def write_text_atomic(path: Path, text: str | list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the artifact from others
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
            fh.writelines([text] if isinstance(text, str) else text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- data ---------------------------------------------------------------------------------------


def page_data(
    entries: HtmlEntries,
    functions: dict[str, list[dict[str, Any]]],
    scores: Scores,
    gate: GateResult | None,
) -> dict[str, Any]:
    """What the page's script reads first, besides the records' index rows (see
    :func:`data_json`): the function docs they point to, the categories in score-table
    order."""
    order = list(scores.categories)
    order += sorted(entries.categories - set(order))
    used = entries.functions_keys
    return {
        "functions": {key: docs for key, docs in functions.items() if key in used},
        "categories": order,
        "agentic_prefixes": ["memory_", "web_search_"],
        "gated": gate is not None and bool(gate.comparisons),
    }


def data_json(entries: HtmlEntries, rest: dict[str, Any]) -> str:
    """The page's data as JSON: the index rows as gathered (already JSON), then the rest."""
    return '{"records":' + entries.index_json() + "," + _json(rest)[1:]


def record_details(records: list[EntryRecord]) -> list[dict[str, Any]]:
    """Each record's other fields, in the index's order."""
    index = set(INDEX_FIELDS)
    return [r.model_dump(mode="json", exclude=index, exclude_defaults=True) for r in records]


def data_element(payload: dict[str, Any], gzip_above: int | None = None) -> str:
    """The index as a non-executed script element (see :func:`script_element`)."""
    return script_element("bfcl-data", _json(payload), gzip_above)


def details_element(details: list[dict[str, Any]], gzip_above: int | None = None) -> str:
    """The details as JSON Lines, one line per record (JSON never holds a raw newline), so the
    page parses only the entries a person opens."""
    return script_element("bfcl-details", "\n".join(_json(d) for d in details), gzip_above)


def script_element(element_id: str, text: str, gzip_above: int | None = None) -> str:
    """A ``<script type="application/json">`` element holding ``text`` (JSON) with ``<``,
    ``>``, ``&``, U+2028/2029 and lone surrogates escaped (they only occur inside JSON
    strings, where the escapes mean the same), or, when large, gzip + base64."""
    safe = script_safe(text)
    if len(safe) > (GZIP_ABOVE if gzip_above is None else gzip_above):
        packed = base64.b64encode(gzip.compress(safe.encode("utf-8"), compresslevel=6))
        return f"{_element_open(element_id, True)}{packed.decode('ascii')}</script>"
    return f"{_element_open(element_id, False)}{safe}</script>"


def _element_open(element_id: str, packed: bool) -> str:
    encoding = ' data-encoding="gzip"' if packed else ""
    return f'<script id="{element_id}" type="application/json"{encoding}>'


_json = compact_json


def read_script_element(page: str, element_id: str) -> str:
    """The JSON text of one data element of a rendered page (either encoding)."""
    match = re.search(
        rf'<script id="{element_id}" type="application/json"( data-encoding="gzip")?>'
        r"(.*?)</script>",
        page,
        re.S,
    )
    if match is None:
        raise ValueError(f"no {element_id} element in this page")
    if match.group(1):
        return gzip.decompress(base64.b64decode(match.group(2))).decode("utf-8")
    return match.group(2)


def read_data_element(page: str) -> dict[str, Any]:
    """The page's data with whole records (index and details merged): for tests and tools
    that read a report."""
    data = json.loads(read_script_element(page, "bfcl-data"))
    if '<script id="bfcl-details"' in page:
        lines = read_script_element(page, "bfcl-details").split("\n")
        details = [json.loads(line) for line in lines if line]
        data["records"] = [
            {**index, **detail} for index, detail in zip(data["records"], details, strict=True)
        ]
    return data


def _asset(name: str) -> str:
    return resources.files("pytest_bfcl.report").joinpath("html_assets", name).read_text("utf-8")


# -- static parts -------------------------------------------------------------------------------


def _text(value: Any) -> str:
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
    if metadata.get("sample"):
        facts.append(("sample", f"{metadata['sample']} (seed {metadata.get('seed')})"))
    if scores.partial_eval:
        facts.append(("scoring", "--bfcl-partial-eval (entries present only)"))
    overall = (
        f"partial ({_percent(scores.overall.reference_accuracy)} with not-run as 0)"
        if scores.partial
        else _percent(scores.overall.accuracy)
    )
    reasons = gate_reasons(gate) if gate is not None else []
    lines = [
        "<header>",
        f'<h1>BFCL V4 &middot; <span class="model">{_text(metadata.get("model"))}</span></h1>',
        '<p class="facts">'
        + " &middot; ".join(f"{_text(k)}: <b>{_text(v)}</b>" for k, v in facts)
        + "</p>",
        f'<p class="verdict"><span id="gate-verdict" class="badge {css}">gate: {_text(word)}'
        f"</span> overall: <b>{_text(overall)}</b></p>",
    ]
    if reasons:
        lines.append(gate_reasons_html(reasons))
    lines.append("</header>")
    return "\n".join(lines)


def gate_reasons_html(reasons: list[str], shown: int = 4) -> str:
    """The first few reasons, the rest folded (a failed nightly run can list dozens)."""
    items = [f"<li>{_text(r)}</li>" for r in reasons]
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
    # Looked up by kind and name: the irrelevance category and group share a name.
    by_category = {c.name: c for c in comparisons if c.kind == "category"}
    by_group = {c.name: c for c in comparisons if c.kind != "category"}
    gated = bool(comparisons)
    samples = max((c.samples for c in scores.categories.values()), default=1)
    head = ["category", "correct", "total", "accuracy", "95% CI"]
    if samples > 1:
        head = ["category", "entries", "mean", "95% CI", f"pass^{samples}", f"pass@{samples}"]
        head.append("flaky")
    head.append("notes")
    compared_head = ["baseline", "change", "p-value", "detects", "regressed", "flaky before"]
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
        f'<td class="num" title="smallest drop in points found with 80% power">{detects}</td>'
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
        f'<tr data-category="{_text(name)}"><td><a href="#" class="cat-link" '
        f'data-category="{_text(name)}">{_text(name)}</a>{mark}</td>{figures}'
        f"<td>{_text(', '.join(_category_notes(cat)))}</td>"
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
        f'<tr{css}><td>{_text(label)}</td><td class="num">{_text(shown)}</td>'
        f"{_interval_cell(group.ci95)}"
        f"<td>{_text('; '.join(notes))}</td>{_comparison_cells(comparison, gated)}</tr>"
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
