"""Two static sections of the HTML report, painted before any script runs: how a sequential
run stopped (the stage, what it asked of the whole selection, why), and the entries worse
than the baseline with the baseline's answer and this run's side by side, their differences
marked, so a reviewer reads them without opening each entry."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.report.html.answer_diff import marked_difference, shown_answer
from pytest_bfcl.report.html.tables import html_text
from pytest_bfcl.wording import count

# Entries shown side by side on the page itself (the rest are one click away in the list).
SHOWN_CHANGES = 20
# Characters of each answer shown there (the whole bounded answer is in the entry's details).
SHOWN_CHARS = 1200


def sequential_html(record: dict[str, Any] | None) -> str:
    """How a sequential run (``--bfcl-sequential``) stopped: empty for any other run."""
    if not record:
        return ""
    stages = record.get("stages") or []
    reached = int(record.get("reached") or 0)
    asked, full = record.get("asked") or {}, record.get("full") or {}
    early = reached < len(stages)
    word = "stopped early" if early else "asked every stage"
    share = float(record.get("share_of_queries") or 0.0)
    facts = [
        ("stage", f"{reached} of {len(stages)}"),
        ("entries asked", f"{asked.get('entries', 0):,} of {full.get('entries', 0):,}"),
        (
            "queries asked",
            f"{asked.get('queries', 0):,} of {full.get('queries', 0):,} ({share:.0%})",
        ),
        ("why", str(record.get("reason") or "not recorded")),
    ]
    rows = "".join(f"<tr><th>{html_text(k)}</th><td>{html_text(v)}</td></tr>" for k, v in facts)
    note = (
        '<p class="muted">The gate\'s decision is on the entries asked: a comparison it '
        "passed at this stage was clearly fine there; the score table's changes are measured "
        "on those entries only.</p>"
        if early
        else ""
    )
    return (
        f'<section id="sequential" class="panel"><h2>Sequential gate: '
        f'<span class="badge {"warn" if early else "neutral"}">{word}</span></h2>'
        f'<table class="facts-table">{rows}</table>{note}</section>'
    )


def changes_html(changes: dict[str, Any] | None, failing: set[str]) -> str:
    """The entries worse than the baseline (those behind a failing comparison first), each
    with both answers side by side; empty when none got worse."""
    worse = list((changes or {}).get("regressions") or [])
    if not worse:
        return ""
    worse.sort(key=lambda c: c.get("id") not in failing)  # stable: the gate's order kept
    note = (changes or {}).get("note")
    shown = worse[:SHOWN_CHANGES]
    items = [_change_html(change, change.get("id") in failing, note) for change in shown]
    more = len(worse) - len(shown)
    tail = (
        f'<p class="muted">... and {count(more, "more entry", "more entries")}: the '
        '"regressed" filter below lists them all.</p>'
        if more > 0
        else ""
    )
    return (
        '<section id="changes" class="panel"><h2>Worse than the baseline '
        f'<span class="muted">{count(len(worse), "entry", "entries")}, the baseline\'s '
        "answer beside this run's</span></h2>" + "".join(items) + tail + "</section>"
    )


def _change_html(change: dict[str, Any], failing: bool, note: str | None) -> str:
    entry_id, category = str(change.get("id")), str(change.get("category"))
    before = shown_answer(_cut(change.get("baseline_answer")))
    after = shown_answer(_cut(change.get("answer")))
    badge = (
        '<span class="badge bad">REGRESSION</span>'
        if failing
        else '<span class="badge neutral">worse, within the noise</span>'
    )
    if before is not None and after is not None:
        runs = marked_difference(before, after)
        left = _marked(runs, "-", "removed")
        right = _marked(runs, "+", "added")
    else:
        missing = change.get("no_baseline_answer") or note or "no answer kept"
        left = html_text(before) if before is not None else html_text(f"(none: {missing})")
        right = html_text(after) if after is not None else "(none: this run kept no answer)"
    return (
        f'<div class="change" data-id="{html_text(entry_id)}"><p>{badge} '
        f'<a class="id" href="#entry={html_text(entry_id)}">{html_text(entry_id)}</a> '
        f'<span class="muted">{html_text(category)}</span></p>'
        '<div class="answers-beside">'
        f'<div><h4>baseline\'s answer</h4><pre class="answer">{left}</pre></div>'
        f'<div><h4>this run\'s answer</h4><pre class="answer">{right}</pre></div>'
        "</div></div>"
    )


def _cut(text: Any) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _marked(runs: list[list[str]], keep: str, css: str) -> str:
    """One side of the difference: the common text, and this side's own marked."""
    out = []
    for op, piece in runs:
        if op == "=":
            out.append(html_text(piece))
        elif op == keep:
            out.append(f'<mark class="{css}">{html_text(piece)}</mark>')
    return "".join(out)
