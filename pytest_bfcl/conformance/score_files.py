"""The official evaluator's score files, read as data.

Layout: ``<score root>/<model dir>/<group dir>/BFCL_v4_<category>_score.json``, JSON Lines. The
first line is the category's summary (``accuracy``, ``correct_count``, ``total_count``); every
other line is one failing entry. Single-turn and relevance records carry ``error_type`` at the
top level; multi-turn and agentic records carry it inside their ``error`` object. An entry of
the result file with no failure record passed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.files import read_problem, read_small_text

SCORE_FILE_MAX = 512 << 20  # bytes of one score file the evaluator wrote

SCORE_FILE_GLOB = "BFCL_v4_*_score.json"
_CATEGORY_IN_NAME = re.compile(r"BFCL_v4_(\w+?)_score\.json$")


class ScoreFileError(ValueError):
    """A score file that is not in the evaluator's format."""


class EntryVerdict(BaseModel):
    """One entry's verdict, from either side of the comparison."""

    model_config = ConfigDict(frozen=True)

    id: str
    category: str
    valid: bool
    error_type: str | None = None


class CategoryScore(BaseModel):
    """One score file: its summary line and its failing entries, by id."""

    category: str
    accuracy: float
    correct_count: int
    total_count: int
    failures: dict[str, EntryVerdict]


def category_of_score_file(path: Path) -> str | None:
    match = _CATEGORY_IN_NAME.search(path.name)
    return match.group(1) if match else None


def error_type_of(record: dict[str, Any]) -> str | None:
    """Where the record keeps it: top level (AST, relevance) or inside ``error`` (the rest)."""
    if isinstance(record.get("error_type"), str):
        return record["error_type"]
    error = record.get("error")
    if isinstance(error, dict) and isinstance(error.get("error_type"), str):
        return error["error_type"]
    return None


def _json_line(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ScoreFileError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    if not isinstance(value, dict):
        raise ScoreFileError(f"{path}:{number}: expected a JSON object")
    return value


def parse_score_file(path: Path) -> CategoryScore:
    """Summary and failures of one category's score file."""
    category = category_of_score_file(path)
    if category is None:
        raise ScoreFileError(f"{path}: not a BFCL_v4_<category>_score.json file")
    try:
        text = read_small_text(path, SCORE_FILE_MAX)
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoreFileError(f"cannot read {path}: {read_problem(exc)}") from None
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise ScoreFileError(f"{path}: empty score file")
    header = _json_line(path, *lines[0])
    try:
        accuracy = float(header["accuracy"])
        correct, total = int(header["correct_count"]), int(header["total_count"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ScoreFileError(
            f"{path}:1: summary line lacks accuracy/correct_count/total_count"
        ) from exc
    failures: dict[str, EntryVerdict] = {}
    for number, line in lines[1:]:
        record = _json_line(path, number, line)
        entry_id = record.get("id")
        if not isinstance(entry_id, str):
            raise ScoreFileError(f"{path}:{number}: failure record without an id")
        failures[entry_id] = EntryVerdict(
            id=entry_id, category=category, valid=False, error_type=error_type_of(record)
        )
    return CategoryScore(
        category=category,
        accuracy=accuracy,
        correct_count=correct,
        total_count=total,
        failures=failures,
    )


def read_score_dir(model_score_dir: Path) -> dict[str, CategoryScore]:
    """Every category scored under one model's score directory (group folders included)."""
    scores: dict[str, CategoryScore] = {}
    for path in sorted(model_score_dir.rglob(SCORE_FILE_GLOB)):
        score = parse_score_file(path)
        scores[score.category] = score
    return scores


def reference_verdicts(score: CategoryScore, result_ids: list[str]) -> dict[str, EntryVerdict]:
    """Per-entry verdicts of one category: the failures, and a pass for every other result id.

    The evaluator writes no line for a passing entry, so the result file says which entries
    were scored; its count must match the summary's, or the pairing would be a guess.
    """
    if len(result_ids) != score.total_count:
        raise ScoreFileError(
            f"{score.category}: the score file counts {score.total_count} entries, "
            f"the result file holds {len(result_ids)}"
        )
    unknown = sorted(set(score.failures) - set(result_ids))
    if unknown:
        raise ScoreFileError(
            f"{score.category}: failure records for ids not in the result file: {unknown[:5]}"
        )
    return {
        entry_id: score.failures.get(entry_id)
        or EntryVerdict(id=entry_id, category=score.category, valid=True)
        for entry_id in result_ids
    }
