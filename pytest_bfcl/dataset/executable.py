"""The first release's executable categories (``exec_*``, ``rest``, ``sql``), shipped unused
under ``unused_datasets/``: their entries, ground truth and API sanity-check files.

* ``exec_*``: ground truth is a list of call strings and, per call, how its result is matched
  (``exact_match``, ``real_time_match`` or ``structural_match``);
* ``rest``: ground truth is the expected JSON response; the call that produced it lives in the
  sanity-check file (``executable_eval_sanity_check/api_status_check_ground_truth_rest.json``,
  ``idx`` = the entry's number), where the oracle and the session probe read it;
* ``sql``: ground truth in the AST format, for ``sql.execute``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_bfcl.dataset.categories import Category
from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.dataset.models import AstAnswer, Entry
from pytest_bfcl.files import open_regular_file

SANITY_DIR = "unused_datasets/executable_eval_sanity_check"
REST_SANITY_FILE = f"{SANITY_DIR}/api_status_check_ground_truth_rest.json"
EXEC_SANITY_FILE = f"{SANITY_DIR}/api_status_check_ground_truth_executable.json"

MATCH_TYPES = ("exact_match", "real_time_match", "structural_match")


class ExecAnswer(BaseModel):
    """Ground truth of an ``exec_*`` or ``rest`` entry."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    # exec: the ground-truth call strings; rest: the expected response as JSON text
    ground_truth: list[str] | str
    execution_result_type: list[str] = Field(default_factory=list)
    # rest: the call that produced the expected response (from the sanity-check file)
    call: str | None = None

    @property
    def calls(self) -> list[str]:
        if isinstance(self.ground_truth, list):
            return list(self.ground_truth)
        return [self.call] if self.call else []


ReadJsonl = Callable[[Path], Iterator[tuple[int, dict[str, Any]]]]
Validate = Callable[[type[Any], dict[str, Any], Path, int], Any]


def load_entries(root: Path, cat: Category, read: ReadJsonl, validate: Validate) -> list[Entry]:
    """The category's entries. ``sql`` questions are a flat message list in the data (one
    turn); they are wrapped into the turn list every other entry has."""
    path = root / cat.question_file
    _require(path)
    out = []
    for lineno, obj in read(path):
        question = obj.get("question")
        if isinstance(question, list) and question and isinstance(question[0], dict):
            obj["question"] = [question]
        out.append(validate(Entry, obj, path, lineno))
    return out


def load_answers(
    root: Path, cat: Category, entries: list[Entry], read: ReadJsonl, validate: Validate
) -> dict[str, AstAnswer | ExecAnswer]:
    """Ground truth keyed by entry id (aligned by position, as everywhere in the benchmark)."""
    assert cat.answer_file is not None
    path = root / cat.answer_file
    _require(path)
    model: type[Any] = AstAnswer if cat.variant == "sql" else ExecAnswer
    answers = [validate(model, obj, path, lineno) for lineno, obj in read(path)]
    if len(answers) != len(entries):
        raise DatasetError(f"{path}: {len(answers)} answers for {len(entries)} questions")
    if cat.variant == "rest":
        calls = rest_calls(root, read)
        answers = [
            a.model_copy(update={"call": calls.get(_number(e.id))})
            for e, a in zip(entries, answers, strict=True)
        ]
    for answer in answers:
        if isinstance(answer, ExecAnswer):
            _check_match_types(path, answer)
    return {e.id: a for e, a in zip(entries, answers, strict=True)}


def rest_calls(root: Path, read: ReadJsonl) -> dict[int, str]:
    """The REST ground-truth calls by entry number."""
    path = root / REST_SANITY_FILE
    _require(path)
    out: dict[int, str] = {}
    for lineno, obj in read(path):
        if not isinstance(obj.get("idx"), int) or not isinstance(obj.get("ground_truth"), str):
            raise DatasetError(f"{path}:{lineno}: expected {{'idx': int, 'ground_truth': str}}")
        out[obj["idx"]] = obj["ground_truth"]
    return out


def exec_sanity_checks(root: Path, read: ReadJsonl) -> list[dict[str, Any]]:
    """The executable sanity-check calls: ``{idx, ground_truth, execution_result,
    execution_result_type}`` (the results recorded when the file was made)."""
    path = root / EXEC_SANITY_FILE
    _require(path)
    return [obj for _, obj in read(path)]


def _number(entry_id: str) -> int:
    return int(entry_id.rsplit("_", 1)[1])


def _check_match_types(path: Path, answer: ExecAnswer) -> None:
    unknown = set(answer.execution_result_type) - set(MATCH_TYPES)
    if unknown:
        raise DatasetError(f"{path}: {answer.id} has unknown result types {sorted(unknown)}")


def _require(path: Path) -> None:
    if not path.is_file():
        raise DatasetError(f"BFCL data file {path} is missing")


def read_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """A plain JSON-lines reader (for callers without the dataset's own)."""
    with open_regular_file(path) as raw, io.TextIOWrapper(raw, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                yield lineno, json.loads(line)
