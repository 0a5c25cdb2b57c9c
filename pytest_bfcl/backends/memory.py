"""Memory backends of the agentic memory categories: key-value (``MemoryAPI_kv``) and recursive
summary (``MemoryAPI_rec_sum``); the vector store lives in :mod:`.memory_vector`.

A memory backend starts from a *snapshot* (the plain-JSON memory a scenario's previous
conversations left behind, or nothing) and can give its snapshot back after a conversation.
Snapshots are files of the run; reading and writing them is the memory flow's job
(:mod:`pytest_bfcl.run.memory_flow`), so the backends stay free of paths.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any, ClassVar

from pytest_bfcl.backends.base import Backend, named_as
from pytest_bfcl.backends.long_context import LongContext

CORE_SIZE, CORE_ENTRY_LENGTH = 7, 300
ARCHIVAL_SIZE, ARCHIVAL_ENTRY_LENGTH = 50, 2000
SUMMARY_LENGTH = 10_000

_KEY = re.compile(r"^[a-z]+(_[a-z0-9]+)*$")
# BM25+ parameters of the key search
_K1, _B, _DELTA = 1.5, 0.75, 1.0


class MemoryBackend(Backend):
    """Common shape of the memory backends: loaded from a snapshot, exported as one."""

    # Text shown in the memory instruction when there is nothing to show.
    EMPTY_CONTEXT: ClassVar[str] = ""
    # One memory the model rewrites whole (the instruction then shows it as one), rather than
    # core and archival parts.
    UNIFIED: ClassVar[bool] = False

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        snapshot = config.get("snapshot")
        if snapshot:
            self._restore(copy.deepcopy(snapshot))

    def _restore(self, snapshot: dict[str, Any]) -> None:
        raise NotImplementedError

    def _snapshot(self) -> dict[str, Any]:
        """The memory as plain JSON data (what the next conversation of the scenario loads)."""
        raise NotImplementedError

    def _context_dump(self) -> str:
        """The memory text placed in the system instruction of every memory conversation."""
        raise NotImplementedError


def tokenize(text: str) -> list[str]:
    return text.replace("_", " ").lower().split()


def bm25_plus_ranking(query: str, keys: list[str], k: int = 5) -> list[list[Any]]:
    """Keys ranked by BM25+ score against the query: ``[[score, key], ...]``, best first, ties
    in insertion order. Query words that no key contains add nothing; an empty key list has no
    average length (a ZeroDivisionError, which the caller reports as an error result)."""
    documents = [tokenize(key) for key in keys]
    average = sum(len(d) for d in documents) / len(documents)
    document_frequency: dict[str, int] = {}
    for document in documents:
        for word in set(document):
            document_frequency[word] = document_frequency.get(word, 0) + 1
    idf = {w: math.log((len(documents) + 1) / n) for w, n in document_frequency.items()}
    scores = [0.0] * len(documents)
    for word in tokenize(query):
        weight = idf.get(word)
        if weight is None:
            continue
        for i, document in enumerate(documents):
            tf = document.count(word)
            norm = _K1 * (1 - _B + _B * len(document) / average) + tf
            scores[i] += weight * (_DELTA + (tf * (_K1 + 1)) / norm)
    ranked = sorted(zip(scores, keys, strict=True), key=lambda pair: pair[0], reverse=True)
    return [[score, key] for score, key in ranked[:k]]


class _KeyValueStore:
    """One bounded key-value store (core or archival) and its messages."""

    def __init__(self, size: int, entry_length: int, full: str, added: str, cleared: str) -> None:
        self.size, self.entry_length = size, entry_length
        self.full, self.added, self.cleared = full, added, cleared

    def add(self, memory: dict[str, str], key: Any, value: Any) -> dict[str, str]:
        key, value = str(key), str(value)
        if len(memory) >= self.size:
            return {"error": self.full}
        if len(value) > self.entry_length:
            return {"error": self.too_long}
        if not _KEY.match(key):
            return {"error": "Key must be in snake_case format and cannot contain spaces."}
        if key in memory:
            return {"error": "Key name must be unique."}
        memory[key] = value
        return {"status": self.added}

    @property
    def too_long(self) -> str:
        return (
            f"Entry is too long. Please shorten the entry to less than {self.entry_length} "
            "characters."
        )

    def replace(self, memory: dict[str, str], key: Any, value: Any) -> dict[str, str]:
        key, value = str(key), str(value)
        if key not in memory:
            return {"error": "Key not found."}
        if len(value) > self.entry_length:
            return {"error": self.too_long}
        memory[key] = value
        return {"status": "Key replaced."}


_CORE = _KeyValueStore(
    CORE_SIZE,
    CORE_ENTRY_LENGTH,
    "Core memory is full. Please clear some entries.",
    "Key-value pair added.",
    "Short term memory cleared.",
)
_ARCHIVAL = _KeyValueStore(
    ARCHIVAL_SIZE,
    ARCHIVAL_ENTRY_LENGTH,
    "Long term memory is full. Please clear some entries.",
    "Key added.",
    "Long term memory cleared.",
)


def _remove(memory: dict[str, str], key: Any) -> dict[str, str]:
    if key in memory:
        del memory[key]
        return {"status": "Key removed."}
    return {"error": "Key not found."}


def _retrieve(memory: dict[str, str], key: Any) -> dict[str, str]:
    if key not in memory:
        return {"error": "Key not found."}
    return {"value": memory[key]}


@named_as("MemoryAPI_kv")
class MemoryKV(MemoryBackend):
    """Core memory (small, always shown to the model) and archival memory (larger, searched by
    key), both dictionaries of snake_case keys to text."""

    DEFAULTS: ClassVar[dict[str, Any]] = {"core_memory": {}, "archival_memory": {}}
    EMPTY_CONTEXT = "There is no content in the core memory at this point."

    core_memory: dict[str, str]
    archival_memory: dict[str, str]

    def _restore(self, snapshot: dict[str, Any]) -> None:
        self.core_memory = dict(snapshot["core_memory"])
        self.archival_memory = dict(snapshot["archival_memory"])

    def _snapshot(self) -> dict[str, Any]:
        return {
            "core_memory": dict(self.core_memory),
            "archival_memory": dict(self.archival_memory),
        }

    def _context_dump(self) -> str:
        return json.dumps(self.core_memory, indent=4) if self.core_memory else self.EMPTY_CONTEXT

    # -- core memory ------------------------------------------------------------------------

    def core_memory_add(self, key: str, value: str) -> dict[str, str]:
        return _CORE.add(self.core_memory, key, value)

    def core_memory_remove(self, key: str) -> dict[str, str]:
        return _remove(self.core_memory, key)

    def core_memory_replace(self, key: str, value: str) -> dict[str, str]:
        return _CORE.replace(self.core_memory, key, value)

    def core_memory_clear(self) -> dict[str, str]:
        self.core_memory = {}
        return {"status": _CORE.cleared}

    def core_memory_retrieve(self, key: str) -> dict[str, str]:
        return _retrieve(self.core_memory, key)

    def core_memory_list_keys(self) -> dict[str, list[str]]:
        return {"keys": list(self.core_memory)}

    def core_memory_key_search(self, query: str, k: int = 5) -> dict[str, list[list[Any]]]:
        return {"ranked_results": bm25_plus_ranking(query, list(self.core_memory), k)}

    def core_memory_retrieve_all(self) -> dict[str, str]:
        return self.core_memory

    # -- archival memory --------------------------------------------------------------------

    def archival_memory_add(self, key: str, value: str) -> dict[str, str]:
        return _ARCHIVAL.add(self.archival_memory, key, value)

    def archival_memory_remove(self, key: str) -> dict[str, str]:
        return _remove(self.archival_memory, key)

    def archival_memory_replace(self, key: str, value: str) -> dict[str, str]:
        return _ARCHIVAL.replace(self.archival_memory, key, value)

    def archival_memory_clear(self) -> dict[str, str]:
        self.archival_memory = {}
        return {"status": _ARCHIVAL.cleared}

    def archival_memory_retrieve(self, key: str) -> dict[str, str]:
        return _retrieve(self.archival_memory, key)

    def archival_memory_list_keys(self) -> dict[str, list[str]]:
        return {"keys": list(self.archival_memory)}

    def archival_memory_key_search(self, query: str, k: int = 5) -> dict[str, list[list[Any]]]:
        return {"ranked_results": bm25_plus_ranking(query, list(self.archival_memory), k)}


def _too_long_after(action: str) -> dict[str, str]:
    return {
        "error": f"Entry will be too long after {action}. Please shorten the entry to less than "
        f"{SUMMARY_LENGTH} characters."
    }


@named_as("MemoryAPI_rec_sum")
class MemoryRecSum(MemoryBackend):
    """One text the model keeps rewriting (a recursive summary), at most 10,000 characters."""

    DEFAULTS: ClassVar[dict[str, Any]] = {"memory": ""}
    EMPTY_CONTEXT = "There is no content in the memory at this point."
    UNIFIED = True

    memory: str

    def _restore(self, snapshot: dict[str, Any]) -> None:
        memory = snapshot["memory"]
        if not isinstance(memory, str):
            raise ValueError(f"a summary snapshot holds text, not {type(memory).__name__}")
        self.memory = memory

    def _snapshot(self) -> dict[str, Any]:
        return {"memory": self.memory}

    def _context_dump(self) -> str:
        return str(self.memory) if self.memory else self.EMPTY_CONTEXT

    def memory_append(self, text: str) -> dict[str, str]:
        text = str(text)
        if len(self.memory + text) > SUMMARY_LENGTH:
            return _too_long_after("appending")
        self.memory += text
        return {"status": "Memory appended."}

    def memory_update(self, text: str) -> dict[str, str]:
        text = str(text)
        if len(text) > SUMMARY_LENGTH:
            return _too_long_after("updating")
        self.memory = text
        return {"status": "Memory updated."}

    def memory_clear(self) -> dict[str, str]:
        self.memory = ""
        return {"status": "Short term memory cleared."}

    def memory_replace(self, old_text: str, new_text: str) -> dict[str, str]:
        old_text, new_text = str(old_text), str(new_text)
        if old_text not in self.memory:
            return {"error": f"Text '{old_text}' not found in memory."}
        if len(new_text) > SUMMARY_LENGTH:
            return _too_long_after("replacing")
        self.memory = self.memory.replace(old_text, new_text)
        return {"status": "Memory updated."}

    def memory_retrieve(self) -> dict[str, str]:
        if not self.memory:
            return {"error": "Memory is empty."}
        return {"memory_content": self.memory}
