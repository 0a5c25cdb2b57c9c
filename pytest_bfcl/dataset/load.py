"""Load and validate the benchmark's entries and ground truth, once per process.

A :class:`Dataset` reads each file at most once and keeps the validated models; the pytest
plugin builds one per session, so collecting the full suite parses the data once.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from pydantic import BaseModel, ValidationError

from pytest_bfcl.dataset.categories import (
    CATEGORIES,
    FORMAT_SENSITIVITY,
    MEMORY_SCENARIOS,
    Category,
    category_of_id,
)
from pytest_bfcl.dataset.fetch import DatasetError, DataSource
from pytest_bfcl.dataset.models import AgenticAnswer, Answer, Entry, FunctionDoc
from pytest_bfcl.files import read_problem, read_small_text
from pytest_bfcl.perf import paused_gc
from pytest_bfcl.printable import printable

M = TypeVar("M", bound=BaseModel)

# Backend class name -> function-doc file under multi_turn_func_doc/.
FUNC_DOC_FILES: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}

# The 26 prompt configurations of format sensitivity, in the reference's order.
FORMAT_CONFIGS: tuple[str, ...] = (
    *(
        f"ret_fmt={ret}&tool_call_tag={tag}&func_doc_fmt={doc}&prompt_fmt=plaintext&style=classic"
        for ret, tag, doc in itertools.product(
            ("python", "json", "verbose_xml", "concise_xml"),
            (True, False),
            ("python", "xml", "json"),
        )
    ),
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic",
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=experimental",
)


DATA_FILE_MAX = 512 << 20  # bytes of one data file (the release's largest is a few MB)


def read_jsonl(path: Path, one_pass: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each line; a bad line names the file and line.
    ``one_pass``: the file is the pinned release's (see :func:`_parsed_as_one_array`)."""
    try:  # a data folder may be the user's: a FIFO or a device there is never opened
        text = read_small_text(path, DATA_FILE_MAX)
    except FileNotFoundError as exc:
        raise DatasetError(f"cannot read BFCL data file {path}: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read BFCL data file {path}: {read_problem(exc)}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    objects = _parsed_as_one_array(lines) if one_pass else None
    if objects is not None:
        yield from enumerate(objects, start=1)
        return
    for lineno, line in enumerate(lines, start=1):  # find the bad line and say what is wrong
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{lineno}: invalid JSON: {exc}") from exc
        if not isinstance(obj, dict):
            raise DatasetError(f"{path}:{lineno}: expected a JSON object, got {obj!r:.80}")
        yield lineno, obj


def _parsed_as_one_array(lines: list[str]) -> list[dict[str, Any]] | None:
    """The lines' objects, parsed in one pass as the items of one JSON array: the parser then
    shares each key's string among all the entries instead of making one per line (10 MB of a
    4,441-entry selection's memory). None unless every line is one object on its own line; the
    line-by-line parse then finds the problem. Only for the pinned release's files: a string
    broken across two lines of a damaged file could join them into objects that still parse,
    which the line-by-line parse would refuse."""
    if not all(line[:1] == "{" and line.rstrip()[-1:] == "}" for line in lines):
        return None
    try:
        objects = json.loads("[" + ",".join(lines) + "]")
    except (ValueError, RecursionError):
        return None
    if len(objects) != len(lines) or not all(isinstance(obj, dict) for obj in objects):
        return None
    return cast(list[dict[str, Any]], objects)


def validate(model: type[M], obj: dict[str, Any], path: Path, lineno: int) -> M:
    if model is Entry and isinstance(obj.get("function"), list):
        obj["source_function"] = obj["function"]  # kept verbatim for prompt rendering
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DatasetError(
            f"{path}:{lineno}: entry '{printable(obj.get('id', '?'), 80)}' is malformed at "
            f"{where or 'top'}: "
            f"{first['msg']}"
        ) from exc


def _check_unique_ids(cat: Category, entries: list[Entry]) -> None:
    """Two entries with one id would be collected twice and scored against one answer."""
    seen: set[str] = set()
    for position, entry in enumerate(entries, start=1):
        if entry.id in seen:
            raise DatasetError(
                f"{cat.question_file}: entry id '{printable(entry.id, 80)}' appears more than once "
                f"(again as entry {position}); ids must be unique"
            )
        seen.add(entry.id)


def read_models(path: Path, model: type[M], one_pass: bool = False) -> list[M]:
    with paused_gc():
        return [validate(model, obj, path, n) for n, obj in read_jsonl(path, one_pass)]


class CategoryReader(Protocol):
    """How one kind of category reads its entries and ground truth with a :class:`Dataset`'s
    readers (the kinds in ``pytest_bfcl/kinds/`` are these)."""

    def load_entries(self, dataset: Dataset, category: Category) -> list[Entry]: ...

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]: ...


class Dataset:
    """Validated entries and answers of one data directory, parsed lazily and at most once.

    ``reader_for`` gives each category's reader: the layer above (``kinds.open_dataset``)
    composes the dataset with the kinds, so data loading never asks what a kind is."""

    def __init__(
        self, source: DataSource, reader_for: Callable[[Category], CategoryReader]
    ) -> None:
        self.source = source
        self._reader_for = reader_for
        self.root = source.data_dir
        self._entries: dict[str, list[Entry]] = {}
        self._answers: dict[str, dict[str, Answer]] = {}
        self._files: dict[str, list[Any]] = {}
        # A worker reads a category when it first scores one of its entries, possibly from a
        # generation thread: one reader at a time, so no file is parsed twice.
        self._lock = threading.RLock()
        self._reads: set[str] | None = None  # the files read while recording (data/index.py)

    # -- raw files ----------------------------------------------------------------------------

    def _file_models(self, rel: str, model: type[M]) -> list[M]:
        key = f"{model.__name__}:{rel}"
        with self._lock:
            if self._reads is not None:
                self._reads.add(rel)
            if key not in self._files:
                path = self.root / rel
                if not path.is_file():
                    raise DatasetError(f"BFCL data file {path} is missing from {self.root}")
                one_pass = self.source.sha256 is not None
                self._files[key] = read_models(path, model, one_pass=one_pass)
            return self._files[key]

    def _doc_file(self, class_name: str) -> str:
        try:
            return f"multi_turn_func_doc/{FUNC_DOC_FILES[class_name]}"
        except KeyError:
            raise DatasetError(f"no function docs are known for backend {class_name!r}") from None

    def function_docs(self, class_name: str) -> list[FunctionDoc]:
        return self._file_models(self._doc_file(class_name), FunctionDoc)

    def raw_function_docs(self, class_name: str) -> list[dict[str, Any]]:
        """The backend's docs as written, aligned with :meth:`function_docs`."""
        key = f"raw:{class_name}"
        with self._lock:
            if self._reads is not None:
                self._reads.add(self._doc_file(class_name))
            if key not in self._files:
                path = self.root / self._doc_file(class_name)
                self._files[key] = [obj for _, obj in read_jsonl(path)]
            return self._files[key]

    @contextlib.contextmanager
    def recording_reads(self) -> Iterator[set[str]]:
        """The data files read (or taken from what was read before) inside the block."""
        with self._lock:
            self._reads = reads = set[str]()
            try:
                yield reads
            finally:
                self._reads = None

    def loaded(self, category: str) -> bool:
        """Whether the category's entries or ground truth were read already."""
        return category in self._entries or category in self._answers

    # -- entries ------------------------------------------------------------------------------

    def entries(self, category: str) -> list[Entry]:
        """The scored entries of a category, in file order (memory prerequisites excluded),
        read as its kind reads them."""
        found = self._entries.get(category)
        if found is not None:
            return found
        with self._lock:
            if category not in self._entries:
                cat = CATEGORIES[category]
                entries = self._reader_for(cat).load_entries(self, cat)
                _check_unique_ids(cat, entries)
                self._entries[category] = entries
            return self._entries[category]

    def entry_map(self, category: str) -> dict[str, Entry]:
        return {e.id: e for e in self.entries(category)}

    # What the kinds read their entries with (pytest_bfcl/kinds/).

    def question_entries(self, cat: Category) -> list[Entry]:
        """The category's question file as it is (a project's own ids checked)."""
        raw = self._file_models(cat.question_file, Entry)
        if cat.custom:
            self._check_custom_ids(cat, raw)
        return raw

    def backend_entries(self, cat: Category) -> list[Entry]:
        """Questions on simulated applications, with the documentation of their functions."""
        return [self._with_backend_docs(e) for e in self._file_models(cat.question_file, Entry)]

    def web_search_entries(self, cat: Category) -> list[Entry]:
        """Web-search questions renamed for the category; hits carry their snippets except in
        a category declared ``no_snippet``."""
        config = {"WebSearchAPI": {"show_snippet": cat.variant != "no_snippet"}}
        return [
            self._agentic_entry(e, e.id.replace("web_search", cat.name, 1), initial_config=config)
            for e in self._file_models(cat.question_file, Entry)
        ]

    @staticmethod
    def _check_custom_ids(cat: Category, entries: list[Entry]) -> None:
        """A project's ids read as the benchmark's do, ``<name>_<number>`` (ASCII digits, a
        sane length): an id is printed, named in node ids and sent as the session header."""
        spelling = re.compile(re.escape(cat.name) + r"_[0-9]{1,9}", re.ASCII)
        for entry in entries:
            if not spelling.fullmatch(entry.id):
                raise DatasetError(
                    f"{cat.question_file}: entry id '{printable(entry.id, 80)}' must read "
                    f"'{cat.name}_<number>' to belong to category {cat.name}"
                )

    def _with_backend_docs(self, entry: Entry, new_id: str | None = None) -> Entry:
        docs = [doc for cls in entry.involved_classes for doc in self.function_docs(cls)]
        raw = [doc for cls in entry.involved_classes for doc in self.raw_function_docs(cls)]
        held_out: dict[str, list[FunctionDoc]] = {}
        held_out_raw: dict[str, list[dict[str, Any]]] = {}
        for turn, names in (entry.missed_function or {}).items():
            for name in names:
                index = next((i for i, d in enumerate(docs) if d.name == name), None)
                if index is None:
                    raise DatasetError(
                        f"{entry.id}: held-out function {name!r} is not among the docs of "
                        f"{entry.involved_classes}"
                    )
                held_out.setdefault(turn, []).append(docs.pop(index))
                held_out_raw.setdefault(turn, []).append(raw.pop(index))
        update: dict[str, Any] = {
            "function": docs,
            "source_function": raw,
            "held_out_functions": held_out,
            "held_out_sources": held_out_raw,
        }
        if new_id is not None:
            update["id"] = new_id
        return entry.model_copy(update=update)

    def _agentic_entry(self, entry: Entry, new_id: str, **update: Any) -> Entry:
        return self._with_backend_docs(entry.model_copy(update=update), new_id)

    def memory_entries(self, cat: Category) -> list[Entry]:
        """Memory questions on the category's store, grouped by scenario, each depending on
        its scenario's prerequisite conversations."""
        questions = self._file_models(cat.question_file, Entry)
        backend = f"MemoryAPI_{cat.variant}"
        out: list[Entry] = []
        for scenario in MEMORY_SCENARIOS:
            prereq_ids = [
                e.id.replace("memory", cat.name, 1)
                for e in self._file_models(
                    f"memory_prereq_conversation/memory_{scenario}.json", Entry
                )
            ]
            for q in questions:
                if q.scenario == scenario:
                    out.append(
                        self._agentic_entry(
                            q,
                            q.id.replace("memory", cat.name, 1),
                            involved_classes=[backend],
                            depends_on=prereq_ids,
                        )
                    )
        return out

    def memory_prerequisites(self, category: str, scenario: str) -> list[Entry]:
        """The prerequisite conversations of one memory scenario, in order, with their ids and
        dependencies rewritten for the memory category."""
        backend = f"MemoryAPI_{CATEGORIES[category].variant}"
        raw = self._file_models(f"memory_prereq_conversation/memory_{scenario}.json", Entry)
        out: list[Entry] = []
        for e in raw:
            out.append(
                self._agentic_entry(
                    e,
                    e.id.replace("memory", category, 1),
                    involved_classes=[backend],
                    depends_on=[p.id for p in out],
                )
            )
        return out

    def format_sensitivity_entries(self) -> list[Entry]:
        path = self.root / CATEGORIES[FORMAT_SENSITIVITY].question_file
        try:
            selection = json.loads(read_small_text(path, DATA_FILE_MAX))
        except (OSError, ValueError) as exc:
            raise DatasetError(
                f"cannot read the format-sensitivity selection {path}: {exc}"
            ) from exc
        if not isinstance(selection, dict):
            raise DatasetError(f"{path}: expected a JSON object of category -> ids")
        out: list[Entry] = []
        counter = 0
        for category, ids in selection.items():
            if category not in CATEGORIES:
                raise DatasetError(f"{path}: unknown category {category!r} in the selection")
            wanted = set(ids)
            for entry in self.entries(category):
                if entry.id not in wanted:
                    continue
                for config in FORMAT_CONFIGS:
                    out.append(
                        entry.model_copy(
                            update={
                                "id": f"{FORMAT_SENSITIVITY}_{counter}:{config}:{entry.id}",
                                "format_config": config,
                            }
                        )
                    )
                    counter += 1
        return out

    # -- ground truth -------------------------------------------------------------------------

    def answers(self, category: str) -> dict[str, Answer]:
        """Ground truth keyed by the category's entry ids, read as its kind reads it."""
        found = self._answers.get(category)
        if found is not None:
            return found
        with self._lock:
            if category not in self._answers:
                cat = CATEGORIES[category]
                self._answers[category] = self._reader_for(cat).load_answers(self, cat)
            return self._answers[category]

    # What the kinds read their ground truth with (pytest_bfcl/kinds/).

    def _answer_models(self, cat: Category, model: type[M]) -> list[M]:
        if cat.answer_file is None:
            return []
        answer_path = cat.answer_file
        if not Path(answer_path).is_absolute():  # a project's own categories use full paths
            answer_path = f"possible_answer/{answer_path}"
        return self._file_models(answer_path, model)

    def positional_answers(self, cat: Category, model: type[M]) -> dict[str, M]:
        """Answers aligned with the questions by position, like the reference (the ids of
        renamed web-search entries differ from their answers')."""
        if cat.answer_file is None:
            return {}
        answers = self._answer_models(cat, model)
        entries = self.entries(cat.name)
        if len(answers) != len(entries):
            raise DatasetError(
                f"{self.root / 'possible_answer' / cat.answer_file}: {len(answers)} answers for "
                f"{len(entries)} questions of {cat.name}"
            )
        return {e.id: a for e, a in zip(entries, answers, strict=True)}

    def memory_answers(self, cat: Category) -> dict[str, AgenticAnswer]:
        """The memory file lists answers in file order; the questions were regrouped by
        scenario, so they are matched by id."""
        by_id = {a.id: a for a in self._answer_models(cat, AgenticAnswer)}
        return {e.id: by_id[e.id.replace(cat.name, "memory", 1)] for e in self.entries(cat.name)}

    def format_sensitivity_answers(self, cat: Category) -> dict[str, Answer]:
        """Each copy is checked against its source entry's ground truth."""
        out: dict[str, Answer] = {}
        for entry in self.entries(cat.name):
            out[entry.id] = self.answers(category_of_id(entry.source_id))[entry.source_id]
        return out
