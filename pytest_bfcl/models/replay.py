"""The replay model: scores stored generations in the reference's result layout,
``DIR/<group>/BFCL_v4_<category>_result.json`` (JSON Lines of ``{"id", "result", ...}``).
A record's ``reasoning_content`` is kept for the reports; ``result`` is decoded as stored, as
the reference's evaluator does (reasoning was split off when the answer was generated)."""

from __future__ import annotations

import json
import marshal
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.layout import GROUP_DIRS, ResultLayout
from pytest_bfcl.decode.reasoning import joined_reasoning
from pytest_bfcl.errors import SetupError
from pytest_bfcl.files import NotARegularFile, open_regular_file, read_problem
from pytest_bfcl.models.base import Generation, ModelBase, NotGenerated, Task
from pytest_bfcl.scoring import TRUNCATED, ScoringOptions


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


# The longest result line read (4 x the default --bfcl-max-entry-bytes): a conversation's
# record holds its history twice (result and log). A longer line is never held whole.
MAX_LINE_BYTES = 64 * 2**20
_HEAD_BYTES = 4096  # where an over-long line's id is looked for
_ID_AT_START = re.compile(rb'^\s*\{\s*"id"\s*:\s*"((?:[^"\\]|\\.){1,300})"')


def _lines(fh: BinaryIO, limit: int) -> Iterator[tuple[bytes, bool]]:
    """The file's lines, each read up to ``limit`` bytes: a longer one is given as its first
    bytes (and ``True``), the rest skipped in pieces, never held whole."""
    while raw := fh.readline(limit + 1):
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw, False
            continue
        head = raw[:_HEAD_BYTES]
        del raw
        while (rest := fh.readline(2**20)) and not rest.endswith(b"\n"):
            pass
        yield head, True


def _over_long(head: bytes, path: Path, lineno: int, limit: int) -> dict[str, Any]:
    """The record of a line over the cap: the model's failure when its id comes first (as the
    reference writes it), like an answer cut at --bfcl-max-response-bytes."""
    match = _ID_AT_START.match(head)
    if match is None:
        raise ReplayError(
            f"{path}:{lineno}: the line is longer than {limit} bytes and does not start with "
            "its id; keep each result under the limit (--bfcl-max-entry-bytes)"
        )
    entry_id = json.loads(b'"' + match.group(1) + b'"')
    note = f"[the stored result was cut: its line is longer than {limit} bytes; not scored]"
    return {"id": entry_id, "result": note}


def sample_roots(directory: Path, samples: int) -> list[Path]:
    """The result directories of ``samples`` repeated samples: ``DIR/sample-1`` ...
    ``DIR/sample-K`` (as ``--bfcl-results-dir`` writes them), each a model's result directory
    or a root holding one model; ``DIR`` itself for one sample."""
    if samples == 1:
        return [resolve_result_root(directory)]
    roots = []
    for number in range(1, samples + 1):
        where = directory.expanduser() / f"sample-{number}"
        if not where.is_dir():
            raise ReplayError(
                f"--bfcl-samples={samples} replays {samples} result sets, "
                f"{directory}/sample-1 ... sample-{samples}; {where} does not exist"
            )
        roots.append(resolve_result_root(where))
    return roots


class ReplayModel(ModelBase):
    def __init__(
        self,
        directory: Path,
        scoring: ScoringOptions,
        samples: int = 1,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self.max_line_bytes = max_line_bytes
        self._cut: set[str] = set()  # ids whose line was over the cap (never held whole)
        self.roots = sample_roots(directory, samples)
        self.root = self.roots[0]
        self.name = f"replay:{self.root.name}"
        self.scoring = scoring
        self._records: dict[tuple[int, str], dict[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def metadata(self) -> dict[str, Any]:
        if len(self.roots) > 1:
            return {"kind": "replay", "directories": [str(r) for r in self.roots]}
        return {"kind": "replay", "directory": str(self.root)}

    def result_file(self, category: str, sample: int = 0) -> Path:
        return ResultLayout(self.roots[sample]).category_file(category)

    def records(self, category: str, sample: int = 0) -> dict[str, dict[str, Any]]:
        with self._lock:
            if (sample, category) not in self._records:
                path = self.result_file(category, sample)
                self._records[(sample, category)] = self._read(path)
            return self._records[(sample, category)]

    def preflight(self, categories: list[str]) -> None:
        """Read every selected category's result file (of every sample) now, so that a broken
        file ends the session once, naming the file and line, instead of failing entry after
        entry."""
        for sample in range(len(self.roots)):
            for category in categories:
                self.records(category, sample)

    def read_state(self) -> bytes | None:
        """The result files read so far (all of them after :meth:`preflight`), packed for an
        xdist worker, which takes them over (:meth:`take_read_state`) instead of reading and
        parsing every file again; None where marshal refuses a value."""
        with self._lock:
            try:
                return marshal.dumps((self._records, self._cut), 4)
            except ValueError:
                return None

    def take_read_state(self, packed: bytes) -> None:
        """Hold what another process read (:meth:`read_state`): those files are not read."""
        records, cut = marshal.loads(packed)
        with self._lock:
            self._records.update(records)
            self._cut |= cut

    def _read(self, path: Path) -> dict[str, dict[str, Any]]:
        if not path.exists() and not path.is_symlink():
            return {}
        out: dict[str, dict[str, Any]] = {}
        first_line: dict[str, int] = {}
        limit = self.max_line_bytes
        try:
            try:  # a FIFO blocks, /dev/zero never ends: neither is opened
                opened = open_regular_file(path)
            except NotARegularFile as exc:
                raise ReplayError(
                    f"{path} is not a regular file ({read_problem(exc)}); store results in one"
                ) from None
            with opened as fh:
                for lineno, (raw, cut) in enumerate(_lines(fh, limit), start=1):
                    record = (
                        _over_long(raw, path, lineno, limit) if cut else _record(raw, path, lineno)
                    )
                    if record is None:
                        continue
                    entry_id = str(record["id"])
                    if cut:
                        self._cut.add(entry_id)
                    if entry_id in first_line:
                        raise ReplayError(
                            f"{path}:{lineno}: id {entry_id!r} appears again (first at line "
                            f"{first_line[entry_id]}); keep one result per entry"
                        )
                    first_line[entry_id] = lineno
                    out[entry_id] = record
        except OSError as exc:
            raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
        return out

    def generate(self, task: Task) -> Generation:
        entry_id = task.entry.id
        category = category_of_id(entry_id)
        sample = min(task.sample, len(self.roots) - 1)
        record = self.records(category, sample).get(entry_id)
        if record is None:
            where = self.result_file(category, sample)
            raise NotGenerated(f"no stored result for {entry_id} in {where}")
        return Generation(
            id=entry_id,
            result=record["result"],
            latency=_number(record.get("latency")),
            input_tokens=_count(record.get("input_token_count")),
            output_tokens=_count(record.get("output_token_count")),
            reasoning=joined_reasoning(record.get("reasoning_content")),
            finish_reason=TRUNCATED if entry_id in self._cut else None,
        )
