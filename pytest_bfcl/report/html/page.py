"""The HTML report: one self-contained page to look into every entry of a run.

The header, the score table and the chart are rendered here as static HTML (they paint before
any script runs). The entries travel as data in two ``<script type="application/json">``
elements, with every character that could end the element or confuse a parser escaped, and
gzip + base64 once large (the page inflates them with the browser's ``DecompressionStream``):
a small index (ids, outcomes, flags) that the lists, filters and search use, and the details
(texts, conversations) as JSON Lines, parsed one entry at a time when it is opened. The page's
script builds rows only for the visible page of a list, so a full run (10,000+ entries) stays
light.

Nothing is loaded from the network: the CSS and the script are read from ``assets/`` and
inlined, and no font or image outside the file is referenced.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_bfcl.files import write_text_atomic
from pytest_bfcl.gate import GateResult
from pytest_bfcl.report.chart import svg_chart
from pytest_bfcl.report.html.builder import HtmlBuilder
from pytest_bfcl.report.html.entries import HtmlEntries
from pytest_bfcl.report.html.facts import EntryRecord, functions_json
from pytest_bfcl.report.html.sections import changes_html, sequential_html
from pytest_bfcl.report.html.tables import (
    entries_skeleton_html,
    header_html,
    html_text,
    scores_html,
)
from pytest_bfcl.report.pending import Settlement
from pytest_bfcl.scores.models import Scores

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
    return "".join(page_pieces(collect(records, functions), scores, gate, metadata))


def collect(records: list[EntryRecord], functions: dict[str, list[dict[str, Any]]]) -> HtmlEntries:
    """Whole records and the docs they point to (by key), gathered as a run gathers them."""
    entries = HtmlEntries()
    for record in records:
        entries.add_record(record)
    used = entries.functions_keys
    entries.add_functions(
        {key: functions_json(docs) for key, docs in functions.items() if key in used}
    )
    return entries


def page_pieces(
    entries: HtmlEntries | HtmlBuilder,
    scores: Scores,
    gate: GateResult | None,
    metadata: dict[str, Any],
    sequential: dict[str, Any] | None = None,
    changes: dict[str, Any] | None = None,
) -> list[str]:
    """The page in pieces, from the entries as gathered during the run; ``sequential`` (the
    JSON report's record of how a sequential run stopped) and ``changes`` (its entries worse
    and better than the baseline, with both answers) are shown above the score table."""
    title = f"BFCL V4: {metadata.get('model')} ({metadata.get('mode')})"
    elements = data_elements(entries, page_data(entries, scores, gate))
    failing = Settlement(gate).failing if gate is not None else set()
    body = "\n".join(
        [
            header_html(metadata, gate, scores),
            '<main id="top">',
            sequential_html(sequential),
            changes_html(changes, set(failing)),
            scores_html(scores, gate),
            '<section id="chart" class="panel"><h2>Chart</h2>',
            svg_chart(scores, gate, title),
            "</section>",
            entries_skeleton_html(len(entries)),
            "</main>",
        ]
    )
    return [
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # No network, ever: the page only runs its own inline script and styles.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{html_text(title)}</title>\n"
        f"<style>\n{_asset('report.css')}</style>\n"
        f"</head><body>\n{body}\n",
        *elements,
        f"\n<script>\n{_asset('report.js')}</script>\n</body></html>\n",
    ]


def write_html(
    path: Path,
    entries: HtmlEntries | HtmlBuilder,
    scores: Scores,
    gate: GateResult | None,
    metadata: dict[str, Any],
    sequential: dict[str, Any] | None = None,
    changes: dict[str, Any] | None = None,
) -> None:
    """Write the page atomically (a killed run never leaves half a page) from the entries
    gathered during the run (:func:`collect` gathers whole records)."""
    # errors="replace": the static part may hold a lone surrogate of the model's (the data
    # elements escape theirs)
    pieces = page_pieces(entries, scores, gate, metadata, sequential, changes)
    write_text_atomic(path, pieces, errors="replace")


# -- data ---------------------------------------------------------------------------------------


def page_data(
    entries: HtmlEntries | HtmlBuilder,
    scores: Scores,
    gate: GateResult | None,
) -> dict[str, Any]:
    """What the page's script reads first besides the records' index rows and the function
    docs they point to (both gathered in ``entries``): the categories in score-table order."""
    order = list(scores.categories)
    order += sorted(entries.categories - set(order))
    return {
        "categories": order,
        "agentic_prefixes": ["memory_", "web_search_"],
        "gated": gate is not None and bool(gate.comparisons),
        # entries worse than the baseline that the gate failed (their records were made
        # before it decided): failures; the page shows the others within the noise
        "gate_failed": sorted(Settlement(gate).failing) if gate is not None else [],
    }


def data_elements(entries: HtmlEntries | HtmlBuilder, rest: dict[str, Any]) -> list[str]:
    """The page's two ``<script type="application/json">`` elements, as text pieces: the data
    (function docs, index rows, ``rest``) and the details (JSON Lines, one per record, parsed
    only when a person opens the entry), each plain or gzip + base64 as gathered."""
    data, data_packed = entries.data(rest)
    details, details_packed = entries.details()
    return [
        _element_open("bfcl-data", data_packed),
        data,
        "</script>\n",
        _element_open("bfcl-details", details_packed),
        details,
        "</script>",
    ]


def _element_open(element_id: str, packed: bool) -> str:
    encoding = ' data-encoding="gzip"' if packed else ""
    return f'<script id="{element_id}" type="application/json"{encoding}>'


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
    return resources.files("pytest_bfcl.report.html").joinpath("assets", name).read_text("utf-8")
