"""``python -m pytest_bfcl.history RUN...``: the scores of stored runs (main's baselines, oldest
first) as a table in the terminal and, with ``--html``, a page with a chart; significant
changes between consecutive runs marked with the gate's own test. Exit status 0, or 2 with
one line on bad input."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_bfcl.compare import _points, _share
from pytest_bfcl.gate import SignatureError, signing_key
from pytest_bfcl.history.series import History, HistoryError, build_history
from pytest_bfcl.settings import GateSettings

PROG = "python -m pytest_bfcl.history"
# Runs shown as columns in the terminal (the latest ones); the page shows every run.
COLUMNS = 10
DROP, GAIN = "v", "^"  # ASCII: a CI log or a terminal without UTF-8 prints them


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.html is not None and any(_same_file(args.html, p) for p in args.runs):
        return _refuse(f"--html {args.html} is one of the runs")
    try:
        key = signing_key(args.key_env, "--key-env")
        settings = GateSettings(alpha=args.alpha, min_drop=args.min_drop)
        history = build_history(args.runs, settings, key)
    except (HistoryError, SignatureError, OSError, ValueError) as exc:
        return _refuse(str(exc))
    for line in table_lines(history, args.columns):
        print(line)
    if args.html is not None:
        from pytest_bfcl.history.page import write_history_page

        try:
            write_history_page(args.html, history)
        except OSError as exc:
            why = "it is a directory" if args.html.is_dir() else exc.strerror or str(exc)
            return _refuse(f"cannot write the page {args.html}: {why}")
        print(f"page: {args.html}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Scores across stored runs (baselines saved with --bfcl-save-baseline, "
        "oldest first), significant changes between consecutive runs marked as the gate "
        "decides them.",
    )
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="stored runs, in order")
    parser.add_argument("--html", type=Path, metavar="PATH", help="write a page with a chart")
    parser.add_argument("--alpha", type=_share, default=0.05, help="the gate's error rate")
    parser.add_argument("--min-drop", type=_points, default=1.0, help="points a change needs")
    parser.add_argument(
        "--columns", type=_columns, default=COLUMNS, help="runs shown in the terminal (latest)"
    )
    parser.add_argument("--key-env", metavar="VAR", help="variable with the signing key")
    return parser


def _columns(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 50:
        raise argparse.ArgumentTypeError(f"{text} is not between 1 and 50")
    return value


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.samefile(other)
    except OSError:
        return False


def _refuse(text: str) -> int:
    print(f"history: {' '.join(text.split())}", file=sys.stderr)
    return 2


def table_lines(history: History, columns: int = COLUMNS) -> list[str]:
    """The runs (numbered), a row per score with a column per run (the latest ``columns``),
    each significant change marked (v a drop, ^ a gain) and listed under the table."""
    first = max(0, len(history.runs) - columns)
    shown = range(first, len(history.runs))
    lines = ["runs (oldest first):"]
    for index, run in enumerate(history.runs):
        stamp = f" [{run.identity}]" if run.identity else ""
        lines.append(
            f"  #{index + 1} {run.path}: {run.model}{stamp}, {run.entries:,} entries, "
            f"recorded {run.when or 'at a time not recorded'}"
        )
    if first:
        lines.append(f"  (the table shows the latest {columns}; every run is on the --html page)")
    marks = {(c.to, c.key): DROP if c.direction == "drop" else GAIN for c in history.changes}
    width = max(len(r.label) for r in history.rows) + 2
    lines += ["", f"{'score':<{width}}" + "".join(f"{'#' + str(i + 1):>9}" for i in shown)]
    for row in history.rows:
        key = f"{row.kind}:{row.name}"
        cells = []
        for index in shown:
            value = history.runs[index].scores.get(key)
            text = "-" if value is None else f"{value * 100:.2f}"
            cells.append(f"{text + marks.get((index, key), ' '):>9}")
        lines.append(f"{row.label:<{width}}" + "".join(cells))
    lines += ["", *change_lines(history)]
    return lines


def change_lines(history: History) -> list[str]:
    """The significant changes, one a line, and the pairs that could not be compared."""
    head = (
        f"significant changes (the gate's test on the entries both runs scored: one-sided, "
        f"Holm over each pair's comparisons, alpha {history.alpha}, minimum "
        f"{history.min_drop} points):"
    )
    lines = [head]
    for change in history.changes:
        word = "drop" if change.direction == "drop" else "gain"
        lines.append(
            f"  #{change.to} -> #{change.to + 1} {change.label}: {change.before * 100:.2f}% -> "
            f"{change.after * 100:.2f}% ({change.points:+.2f} points, p={change.p_value:.2g}), "
            f"significant {word}"
        )
    if not history.changes:
        lines.append("  none")
    for index, why in sorted(history.not_compared.items()):
        lines.append(f"  #{index} -> #{index + 1} not compared: {why}")
    return lines
