"""An entry's HTML record on its way from the process that ran the entry to the one that writes
the page: its facts (:func:`~pytest_bfcl.report.html.facts.record_facts`) packed with
:mod:`marshal`, which copies the values as they are at C speed (shared parts once), so that
rendering them (bounding every text, JSON, keys of the function docs) happens where the page
is built: on the controller, or in a process of its own (:mod:`.html_builder`), by
:meth:`~pytest_bfcl.report.html.entries.HtmlEntries.add_packed`.

A record whose facts hold a value :mod:`marshal` refuses (an object of another type, nesting
past its limit) is rendered where it finished instead and travels as its fields. Function docs
travel once per distinct list of doc objects per sending process: later records name them.
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence
from typing import Any

from pytest_bfcl.report.html.facts import fields_from_facts, functions_json

# marshal's format version: the newest, which writes shared objects once.
_VERSION = 4


class DocsRefs:
    """Names for the function-doc lists one process sends: ``sender:n``, once per distinct list
    of doc objects (multi-turn entries of one backend share theirs). The lists are kept, so
    the object ids in the keys are not reused by other objects."""

    def __init__(self, sender: str) -> None:
        self.sender = sender
        self._refs: dict[tuple[int, ...], tuple[str, Sequence[Any]]] = {}

    def ref(self, docs: Sequence[Any]) -> tuple[str, Sequence[Any] | None]:
        """(the docs' name, the docs when this is the first time they are named)."""
        ids = tuple(map(id, docs))
        known = self._refs.get(ids)
        if known is not None:
            return known[0], None
        name = f"{self.sender}:{len(self._refs)}"
        self._refs[ids] = (name, docs)
        return name, docs


def encode_record(facts: tuple[Any, ...], docs_ref: str, docs: Sequence[Any] | None) -> bytes:
    """An entry's record as it travels: its facts, or its rendered fields when marshal
    refuses a fact, with its docs (the first time they are named) as they are or as JSON."""
    listed = None if docs is None else list(docs)
    try:
        return marshal.dumps(("facts", facts, docs_ref, listed), _VERSION)
    except ValueError:
        pass
    try:
        marshal.dumps(listed, _VERSION)
    except ValueError:
        listed = functions_json(docs or [])  # type: ignore[assignment]
    try:
        return marshal.dumps(("facts", facts, docs_ref, listed), _VERSION)
    except ValueError:
        fields = fields_from_facts(facts, None)
        return marshal.dumps(("fields", fields, docs_ref, listed), _VERSION)


def decode_record(record: bytes) -> tuple[str, str | None, dict[str, Any]]:
    """(the record's docs name, their JSON text when this record brings them, the record's
    fields with no docs key yet): what :meth:`HtmlEntries.add_packed` renders."""
    kind, body, docs_ref, docs = marshal.loads(record)
    docs_text = docs if docs is None or isinstance(docs, str) else functions_json(docs)
    fields = fields_from_facts(body, None) if kind == "facts" else body
    return docs_ref, docs_text, fields
