"""The replay model: scores stored generations in the reference's result layout,
``DIR/<group>/BFCL_v4_<category>_result.json`` (JSON Lines of ``{"id", "result", ...}``).
A record's ``reasoning_content`` is kept for the reports; ``result`` is decoded as stored, as
the reference's evaluator does (reasoning was split off when the answer was generated)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.layout import GROUP_DIRS, ResultLayout
from pytest_bfcl.decode.reasoning import joined_reasoning
from pytest_bfcl.errors import SetupError
from pytest_bfcl.models.base import Generation, ModelBase, NotGenerated, Task
from pytest_bfcl.scoring import ScoringOptions


class ReplayError(SetupError):
    """A result directory or file that cannot be read (a set-up problem, said once)."""


def resolve_result_root(directory: Path) -> Path:
    """Accept a model's result directory, or a result root holding exactly one model."""
    directory = directory.expanduser().resolve()
    if not directory.is_dir():
        raise ReplayError(f"replay directory {directory} does not exist")
    if ResultLayout(directory).holds_results():
        return directory
    models = [d for d in directory.iterdir() if d.is_dir() and ResultLayout(d).holds_results()]
    if len(models) == 1:
        return models[0]
    if not models:
        raise ReplayError(
            f"{directory} holds no results in the reference layout "
            f"(<dir>/<{'|'.join(GROUP_DIRS)}>/BFCL_v4_<category>_result.json)"
        )
    names = ", ".join(sorted(m.name for m in models))
    raise ReplayError(f"{directory} holds results of several models ({names}); name one of them")


def _bounded_int(digits: str) -> int | float:
    """An integer as written; one too long for Python's int parsing (a model's output can hold
    anything) becomes a float, which no ground truth matches, instead of failing the file."""
    return int(digits) if len(digits) <= 4000 else float(digits)


def _record(raw: bytes, path: Path, lineno: int) -> dict[str, Any] | None:
    """One result line as an object with ``id`` and ``result``; ``None`` for a blank line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1]
        raise ReplayError(f"{path}:{lineno}: not UTF-8 text (byte {exc.start}: {bad!r})") from None
    if not line.strip():
        return None
    try:
        record = json.loads(line, parse_int=_bounded_int)
    except (ValueError, RecursionError) as exc:  # ValueError: bad JSON or an over-long integer
        raise ReplayError(f"{path}:{lineno}: invalid JSON: {str(exc)[:200]}") from None
    if not isinstance(record, dict) or "id" not in record or "result" not in record:
        raise ReplayError(f"{path}:{lineno}: expected an object with 'id' and 'result'")
    if not isinstance(record["id"], str):
        shown = "null" if record["id"] is None else f"a {type(record['id']).__name__}"
        raise ReplayError(f"{path}:{lineno}: 'id' must be a string, not {shown}")
    return record


def _numbers(value: Any) -> list[float]:
    """Numbers in a measurement: a scalar, or per-turn, per-step lists (multi-step entries)."""
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [float(value)]
    return []


def _number(value: Any) -> float | None:
    numbers = _numbers(value)
    return sum(numbers) if numbers else None


def _count(value: Any) -> int | None:
    numbers = _numbers(value)
    return int(sum(numbers)) if numbers else None


class ReplayModel(ModelBase):
    def __init__(self, directory: Path, scoring: ScoringOptions) -> None:
        self.root = resolve_result_root(directory)
        self.name = f"replay:{self.root.name}"
        self.scoring = scoring
        self._records: dict[str, dict[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def metadata(self) -> dict[str, Any]:
        return {"kind": "replay", "directory": str(self.root)}

    def result_file(self, category: str) -> Path:
        return ResultLayout(self.root).category_file(category)

    def records(self, category: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            if category not in self._records:
                self._records[category] = self._read(self.result_file(category))
            return self._records[category]

    def preflight(self, categories: list[str]) -> None:
        """Read every selected category's result file now, so that a broken file ends the
        session once, naming the file and line, instead of failing entry after entry."""
        for category in categories:
            self.records(category)

    @staticmethod
    def _read(path: Path) -> dict[str, dict[str, Any]]:
        if not path.is_file():
            return {}
        out: dict[str, dict[str, Any]] = {}
        first_line: dict[str, int] = {}
        try:
            with path.open("rb") as fh:
                for lineno, raw in enumerate(fh, start=1):
                    record = _record(raw, path, lineno)
                    if record is None:
                        continue
                    entry_id = str(record["id"])
                    if entry_id in first_line:
                        raise ReplayError(
                            f"{path}:{lineno}: id {entry_id!r} appears again (first at line "
                            f"{first_line[entry_id]}); keep one result per entry"
                        )
                    first_line[entry_id] = lineno
                    out[entry_id] = record
        except OSError as exc:
            raise ReplayError(f"cannot read {path}: {exc}") from exc
        return out

    def generate(self, task: Task) -> Generation:
        entry_id = task.entry.id
        category = category_of_id(entry_id)
        record = self.records(category).get(entry_id)
        if record is None:
            raise NotGenerated(f"no stored result for {entry_id} in {self.result_file(category)}")
        return Generation(
            id=entry_id,
            result=record["result"],
            latency=_number(record.get("latency")),
            input_tokens=_count(record.get("input_token_count")),
            output_tokens=_count(record.get("output_token_count")),
            reasoning=joined_reasoning(record.get("reasoning_content")),
        )
