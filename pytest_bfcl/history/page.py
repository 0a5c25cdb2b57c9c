"""The history's page: one self-contained HTML file in the reports' style (their stylesheet,
inlined; no script, nothing loaded from the network), with an inline SVG chart of the
overall and group scores per run, the table of every score per run, and the significant
changes between consecutive runs marked on both."""

from __future__ import annotations

from html import escape
from importlib import resources
from pathlib import Path

from pytest_bfcl.files import write_text_atomic
from pytest_bfcl.history.series import Change, History, Row, row_key

# The chart's series colours (distinguishable, and none the red or green of a change's mark).
PALETTE = (
    "#1f5fbf", "#6b4fbb", "#0f8b8d", "#b8860b", "#7a5230", "#c2185b", "#455a64", "#8e6c00",
    "#00838f", "#5d4037",
)  # fmt: skip
DROP_COLOUR, GAIN_COLOUR = "#b42318", "#1b7f3b"
_W, _H = 860, 320  # the plot area
_LEFT, _TOP, _RIGHT, _BOTTOM = 48, 16, 230, 40


def write_history_page(path: Path, history: History) -> None:
    """Write the page atomically (a killed run never leaves half a page)."""
    write_text_atomic(path, [history_page(history)])


def history_page(history: History) -> str:
    models = sorted({run.model for run in history.runs})
    title = f"BFCL V4 history: {', '.join(models)[:120]}"
    drops = sum(c.direction == "drop" for c in history.changes)
    gains = len(history.changes) - drops
    facts = [
        ("runs", f"{len(history.runs)}"),
        ("first", history.runs[0].when or "time not recorded"),
        ("last", history.runs[-1].when or "time not recorded"),
        ("significant", f"{drops} drops, {gains} gains"),
        ("test", f"the gate's: one-sided, Holm, alpha {history.alpha}"),
    ]
    body = [
        "<header>",
        f'<h1>BFCL V4 history &middot; <span class="model">{escape(", ".join(models)[:120])}'
        "</span></h1>",
        '<p class="facts">'
        + " &middot; ".join(f"{escape(k)}: <b>{escape(v)}</b>" for k, v in facts)
        + "</p>",
        "</header>",
        "<main>",
        '<section id="chart" class="panel"><h2>Overall and group scores per run</h2>',
        history_chart(history),
        "</section>",
        '<section id="table" class="panel"><h2>Every score per run</h2>',
        _table(history),
        "</section>",
        '<section id="changes" class="panel"><h2>Significant changes</h2>',
        _changes(history),
        "</section>",
        '<section id="runs" class="panel"><h2>Runs</h2>',
        _runs(history),
        "</section>",
        "</main>",
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{escape(title)}</title>\n"
        f"<style>\n{_stylesheet()}{_EXTRA_CSS}</style>\n"
        "</head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


_EXTRA_CSS = """
table.history { border-collapse: collapse; }
table.history th, table.history td { padding: 2px 8px; border-bottom: 1px solid var(--line); }
table.history th { font-size: 12px; color: var(--muted); text-align: right; }
table.history th:first-child, table.history td:first-child {
  text-align: left; white-space: nowrap; }
td.drop { color: var(--bad); font-weight: 700; background: var(--bad-bg); }
td.gain { color: var(--good); font-weight: 700; background: var(--good-bg); }
#table { overflow-x: auto; }
#chart svg { max-width: 100%; height: auto; }
"""


def _stylesheet() -> str:
    assets = resources.files("pytest_bfcl.report.html").joinpath("assets", "report.css")
    return assets.read_text("utf-8")


def _charted(history: History) -> list[Row]:
    """The overall score and the groups: a category per line would be unreadable (the
    table has them all)."""
    rows = [r for r in history.rows if r.kind != "category"]
    return rows if len(rows) > 1 else history.rows[: len(PALETTE)]


def history_chart(history: History) -> str:
    """An SVG line chart: a line per charted score across the runs, each significant change
    a filled circle (red a drop, green a gain) with its numbers in a tooltip."""
    runs = len(history.runs)
    rows = _charted(history)[: len(PALETTE)]
    values = [
        v
        for row in rows
        for run in history.runs
        if (v := run.scores.get(row_key(row.kind, row.name))) is not None
    ]
    low = max(0.0, (min(values, default=0.0) * 100 // 10) * 10)
    high = min(100.0, (max(values, default=1.0) * 100 // 10 + 1) * 10)
    if high - low < 10:
        low = max(0.0, high - 10)

    def x(index: int) -> float:
        return _LEFT + (_W * index / (runs - 1) if runs > 1 else _W / 2)

    def y(value: float) -> float:
        return _TOP + _H * (1 - (value * 100 - low) / (high - low))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _W + _RIGHT}" '
        f'height="{_TOP + _H + _BOTTOM}" font-family="sans-serif" font-size="11" '
        'role="img" aria-label="scores per run">'
    ]
    for tick in range(int(low), int(high) + 1, 10 if high - low > 30 else 5):
        ty = y(tick / 100)
        parts.append(
            f'<line x1="{_LEFT}" x2="{_LEFT + _W}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#e6e8eb"/>'
            f'<text x="{_LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end" fill="#666b73">'
            f"{tick}%</text>"
        )
    step = max(1, runs // 20)
    for index in range(0, runs, step):
        parts.append(
            f'<text x="{x(index):.1f}" y="{_TOP + _H + 16}" text-anchor="middle" '
            f'fill="#666b73">#{index + 1}</text>'
        )
    marks = {(c.to, c.key): c for c in history.changes}
    for number, row in enumerate(rows):
        colour = PALETTE[number]
        key = row_key(row.kind, row.name)
        points = [
            (i, v) for i, run in enumerate(history.runs) if (v := run.scores.get(key)) is not None
        ]
        path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in points)
        width = 3 if row.kind == "overall" else 1.6
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="{width}"/>'
        )
        for i, v in points:
            change = marks.get((i, key))
            fill = colour if change is None else _mark_colour(change)
            radius = 2.5 if change is None else 5.5
            tip = f"{row.label}, run #{i + 1}: {v * 100:.2f}%"
            if change is not None:
                tip += f"; {_change_text(change)}"
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="{radius}" fill="{fill}">'
                f"<title>{escape(tip)}</title></circle>"
            )
        legend_y = _TOP + 14 + 18 * number
        parts.append(
            f'<line x1="{_LEFT + _W + 16}" x2="{_LEFT + _W + 36}" y1="{legend_y - 4}" '
            f'y2="{legend_y - 4}" stroke="{colour}" stroke-width="{width}"/>'
            f'<text x="{_LEFT + _W + 42}" y="{legend_y}">{escape(row.label[:28])}</text>'
        )
    legend_y = _TOP + 14 + 18 * len(rows) + 10
    for label, colour in (("significant drop", DROP_COLOUR), ("significant gain", GAIN_COLOUR)):
        parts.append(
            f'<circle cx="{_LEFT + _W + 26}" cy="{legend_y - 4}" r="5.5" fill="{colour}"/>'
            f'<text x="{_LEFT + _W + 42}" y="{legend_y}">{label}</text>'
        )
        legend_y += 18
    parts.append("</svg>")
    return "".join(parts)


def _mark_colour(change: Change) -> str:
    return DROP_COLOUR if change.direction == "drop" else GAIN_COLOUR


def _change_text(change: Change) -> str:
    return (
        f"significant {change.direction} from run #{change.to}: {change.before * 100:.2f}% -> "
        f"{change.after * 100:.2f}% ({change.points:+.2f} points, p={change.p_value:.2g})"
    )


def _table(history: History) -> str:
    marks = {(c.to, c.key): c for c in history.changes}
    head = "".join(f"<th>#{i + 1}</th>" for i in range(len(history.runs)))
    rows = []
    for row in history.rows:
        key = row_key(row.kind, row.name)
        cells = []
        for index, run in enumerate(history.runs):
            value = run.scores.get(key)
            change = marks.get((index, key))
            text = "-" if value is None else f"{value * 100:.2f}"
            if change is None:
                cells.append(f'<td class="num">{text}</td>')
                continue
            sign = "&#9660;" if change.direction == "drop" else "&#9650;"
            cells.append(
                f'<td class="num {change.direction}" title="{escape(_change_text(change))}">'
                f"{text} {sign}</td>"
            )
        style = ' class="overall"' if row.kind == "overall" else ""
        rows.append(f"<tr{style}><td>{escape(row.label)}</td>{''.join(cells)}</tr>")
    return f'<table class="history"><tr><th>score</th>{head}</tr>{"".join(rows)}</table>'


def _changes(history: History) -> str:
    items = [
        f'<li class="{c.direction}">#{c.to} &rarr; #{c.to + 1} <b>{escape(c.label)}</b>: '
        f"{escape(_change_text(c))}</li>"
        for c in history.changes
    ]
    items += [
        f"<li>#{i} &rarr; #{i + 1} not compared: {escape(why)}</li>"
        for i, why in sorted(history.not_compared.items())
    ]
    if not items:
        return '<p class="muted">None between consecutive runs.</p>'
    return "<ul>" + "".join(items) + "</ul>"


def _runs(history: History) -> str:
    rows = [
        f"<tr><td>#{i + 1}</td><td>{escape(run.when or 'not recorded')}</td>"
        f"<td>{escape(run.model)}</td><td>{escape(run.identity or '')}</td>"
        f'<td class="num">{run.entries:,}</td><td>{escape(run.path)}</td></tr>'
        for i, run in enumerate(history.runs)
    ]
    head = "<tr><th>run</th><th>recorded</th><th>model</th><th>checkpoint</th><th>entries</th>"
    return f'<table class="history">{head}<th>file</th></tr>{"".join(rows)}</table>'
