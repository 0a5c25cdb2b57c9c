"""Scores across stored runs: every category's, group's and the overall score per run, and the
significant changes between consecutive runs, decided as the gate decides them.

A run is a baseline saved with ``--bfcl-save-baseline`` (main's job saves one per merge).
Each pair of consecutive runs is compared as ``python -m pytest_bfcl.compare`` compares
them, on the entries both scored, both ways: the gate's one-sided test with Holm's
family-wise control finds a significant drop from the earlier to the later run, and the
same test the other way round a significant gain. A pair the gate would refuse to compare
(another temperature, other rules) keeps its scores and says why it has no verdict.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from pytest_bfcl.compare import CompareError, compare_runs, stored_run
from pytest_bfcl.dataset.categories import category_of_id, natural_key
from pytest_bfcl.dataset.groups import DISPLAY_ORDER, display_label, shown
from pytest_bfcl.gate import Baseline, Comparison, GateResult
from pytest_bfcl.scores.board import ScoreBoard, Scores
from pytest_bfcl.settings import GateSettings

# Runs one history reads at most: a year of daily merges, and a bound on its time and memory
# (each run is a baseline of at most a few MB, read once).
MAX_RUNS = 400
# Characters of a run's label taken from its stamps (the model's name, the checkpoint).
LABEL_LIMIT = 60

Kind = Literal["category", "group", "overall"]
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class HistoryError(ValueError):
    """Runs that cannot make a history (none, too many, or one that is not a stored run)."""


class Row(BaseModel):
    """One score the history follows."""

    kind: Kind
    name: str
    label: str


class RunPoint(BaseModel):
    """One stored run: where it came from, its stamps, and each followed score (0 to 1)."""

    path: str
    model: str
    identity: str | None
    when: str | None
    entries: int
    scores: dict[str, float | None]  # by row key


class Change(BaseModel):
    """A significant change between run ``to - 1`` and run ``to`` (0-based indices)."""

    to: int
    key: str
    label: str
    direction: Literal["drop", "gain"]
    before: float
    after: float
    p_value: float

    @property
    def points(self) -> float:
        return (self.after - self.before) * 100


class History(BaseModel):
    runs: list[RunPoint]
    rows: list[Row]
    changes: list[Change]
    not_compared: dict[int, str]  # run index -> why it was not compared with the one before
    alpha: float
    min_drop: float


def row_key(kind: str, name: str) -> str:
    return f"{kind}:{name}"


def build_history(paths: list[Path], settings: GateSettings, key: bytes | None = None) -> History:
    """The history of ``paths``, in the order given (oldest first)."""
    if not paths:
        raise HistoryError("give the stored runs to follow, oldest first")
    if len(paths) > MAX_RUNS:
        raise HistoryError(f"{len(paths)} runs given; at most {MAX_RUNS} (give the latest ones)")
    runs: list[Baseline] = []
    for path in paths:
        try:
            runs.append(stored_run(path, key))
        except (CompareError, ValueError, OSError) as exc:
            raise HistoryError(f"{path}: {_one_line(str(exc))}") from None
    scored = [_scores(run) for run in runs]
    # a group or the overall score that no run has in full (its categories were not all run)
    # has no row
    rows = [r for r in _rows(scored) if any(_value(s, r) is not None for s in scored)]
    if not rows:
        raise HistoryError("these runs scored no entry")
    points = [_point(path, run, s, rows) for path, run, s in zip(paths, runs, scored, strict=True)]
    changes: list[Change] = []
    not_compared: dict[int, str] = {}
    for index in range(1, len(runs)):
        try:
            changes += _changes(index, runs[index - 1], runs[index], settings, rows)
        except CompareError as exc:
            not_compared[index] = _one_line(str(exc))
    return History(
        runs=points,
        rows=rows,
        changes=changes,
        not_compared=not_compared,
        alpha=settings.alpha,
        min_drop=settings.min_drop,
    )


def _scores(run: Baseline) -> Scores:
    """A run's scores on every entry it scored, as compare scores a run."""
    board = ScoreBoard()
    for entry_id in sorted(run.verdicts, key=natural_key):
        passes, samples = run.rate(entry_id)
        board.add_verdict(
            entry_id, category_of_id(entry_id), run.verdicts[entry_id], passes, samples
        )
    return board.scores()


def _rows(scored: list[Scores]) -> list[Row]:
    """The categories any run scored (in the first run's order, then the others'), the groups
    the runs' categories show, and the overall score."""
    categories: dict[str, None] = {}
    for scores in scored:
        categories.update(dict.fromkeys(n for n, c in scores.categories.items() if c.total))
    rows = [Row(kind="category", name=n, label=n) for n in categories]
    ran = set(categories)
    for name in DISPLAY_ORDER:
        if shown(name, ran) and any(s.groups.get(name) is not None for s in scored):
            label = display_label(name).strip()
            rows.append(Row(kind="group", name=name, label=f"{label} (group)"))
    rows.append(Row(kind="overall", name="overall", label="Overall (V4)"))
    return rows


def _value(scores: Scores, row: Row) -> float | None:
    if row.kind == "category":
        category = scores.categories.get(row.name)
        return category.accuracy if category is not None and category.total else None
    group = scores.overall if row.kind == "overall" else scores.groups.get(row.name)
    return group.accuracy if group is not None else None


def _point(path: Path, run: Baseline, scores: Scores, rows: list[Row]) -> RunPoint:
    meta = run.metadata
    info = meta.get("model_info")
    info = info if isinstance(info, dict) else {}
    identity = info.get("identity") or meta.get("model_revision")
    when = _short_time(meta.get("finished_at"))
    return RunPoint(
        path=_label(str(path)),
        model=_label(str(meta.get("model"))),
        identity=_label(str(identity)) if identity else None,
        when=_label(str(when)) if when else None,
        entries=len(run.verdicts),
        scores={row_key(r.kind, r.name): _value(scores, r) for r in rows},
    )


def _changes(
    index: int, before: Baseline, after: Baseline, settings: GateSettings, rows: list[Row]
) -> list[Change]:
    """The significant drops from ``before`` to ``after`` and the significant gains (the
    same test with the runs swapped), for the followed scores."""
    followed = {row_key(r.kind, r.name): r for r in rows}
    found = []
    for direction, gate in (
        ("drop", compare_runs(before, after, settings)[0]),
        ("gain", compare_runs(after, before, settings)[0]),
    ):
        for comparison in _failed(gate):
            row = followed.get(row_key(comparison.kind, comparison.name))
            if row is None:
                continue
            old, new = comparison.baseline_accuracy, comparison.current_accuracy
            if direction == "gain":
                old, new = new, old
            found.append(
                Change(
                    to=index,
                    key=row_key(row.kind, row.name),
                    label=row.label,
                    direction=direction,  # type: ignore[arg-type]
                    before=old,
                    after=new,
                    p_value=comparison.p_value,
                )
            )
    return found


def _failed(gate: GateResult) -> list[Comparison]:
    return [c for c in gate.comparisons if c.failed]


def _short_time(value: object) -> str | None:
    """``2026-11-29 03:28 UTC`` from a recorded ISO time; anything else as recorded."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _label(text: str) -> str:
    """A stamp as one printable line, bounded (stamps are the file's, not the tool's)."""
    flat = _UNPRINTABLE.sub("?", " ".join(text.split()))
    return flat if len(flat) <= LABEL_LIMIT else flat[: LABEL_LIMIT - 3] + "..."


def _one_line(text: str, limit: int = 300) -> str:
    """An error's text as one printable line, bounded."""
    flat = _UNPRINTABLE.sub("?", " ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
