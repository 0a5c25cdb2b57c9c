"""An SVG bar chart of category scores, against the baseline when there is one. Plain SVG, so
no plotting library is needed and CI artifacts open in any browser."""

from __future__ import annotations

from html import escape

from pytest_bfcl.gate import GateResult
from pytest_bfcl.scores.models import Scores
from pytest_bfcl.wording import signed

_ROW = 22
_LEFT = 190
_WIDTH = 420
_LEGEND = 20  # the legend's row, under the title
CURRENT, BASELINE, FAILED = "#1f77b4", "#c8c8c8", "#d62728"


def _legend(with_baseline: bool) -> list[str]:
    """What the colours mean: the current score, and with a baseline its score and the
    categories the gate failed."""
    keys = [("current score", CURRENT)]
    if with_baseline:
        keys += [("baseline", BASELINE), ("significant drop (gate failed)", FAILED)]
    parts = ['<g class="legend">']
    x = 10
    for label, color in keys:
        parts.append(f'<rect x="{x}" y="30" width="12" height="12" fill="{color}"/>')
        parts.append(f'<text x="{x + 16}" y="40">{escape(label)}</text>')
        x += 16 + 7 * len(label) + 18
    parts.append("</g>")
    return parts


def svg_chart(scores: Scores, gate: GateResult | None, title: str) -> str:
    baseline = {c.name: c for c in gate.comparisons if c.kind == "category"} if gate else {}
    rows = [(n, c.accuracy) for n, c in scores.categories.items() if c.accuracy is not None]
    height = 50 + _LEGEND + _ROW * len(rows)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _WIDTH + 90}" '
        f'height="{height}" font-family="sans-serif" font-size="12">',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
        *_legend(bool(baseline)),
    ]
    for i, (name, accuracy) in enumerate(rows):
        y = 35 + _LEGEND + i * _ROW
        parts.append(f'<text x="10" y="{y + 13}">{escape(name)}</text>')
        comparison = baseline.get(name)
        if comparison is not None:
            width = comparison.baseline_accuracy * _WIDTH
            parts.append(
                f'<rect x="{_LEFT}" y="{y}" width="{width:.1f}" height="16" fill="{BASELINE}">'
                f"<title>baseline {comparison.baseline_accuracy:.2%}</title></rect>"
            )
        color = FAILED if comparison is not None and comparison.failed else CURRENT
        parts.append(
            f'<rect x="{_LEFT}" y="{y + 4}" width="{accuracy * _WIDTH:.1f}" height="8" '
            f'fill="{color}"><title>current {accuracy:.2%}</title></rect>'
        )
        label = f"{accuracy:.1%}"
        if comparison is not None:
            label += f" ({signed(-comparison.drop_points, 1)})"
        parts.append(f'<text x="{_LEFT + _WIDTH + 6}" y="{y + 13}">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
