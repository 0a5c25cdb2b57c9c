"""The HTML report's form of an entry record, made once as the entry finishes: the index row
the entry lists need, and the details as one script-safe JSON line, compressed in chunks as
records arrive (:class:`HtmlEntries`), so writing the page needs no second pass over them."""

from __future__ import annotations

import base64
import re
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from pytest_bfcl.report.html.facts import EntryRecord, compact_json, functions_key_of_json
from pytest_bfcl.report.html.records import decode_record

# What the entry lists need (filters, counts, search, row headers); everything else about an
# entry is read from the details when the entry is opened.
INDEX_FIELDS = (
    "id",
    "category",
    "outcome",
    "valid",
    "error_type",
    "baseline_valid",
    "regression",
    "improvement",
)
_INDEX = set(INDEX_FIELDS)

# Above this many characters of JSON, a data element is embedded gzip-compressed (base64):
# model output compresses about tenfold, and the file is what CI keeps as an artifact.
GZIP_ABOVE = 2_000_000

# Characters that must not appear raw inside a <script> element's JSON (or that break
# JavaScript string parsing in older engines); all of them only occur inside JSON strings.
_SCRIPT_UNSAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_SCRIPT_UNSAFE_RE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def script_safe(text: str) -> str:
    """JSON text with ``<``, ``>``, ``&``, U+2028/2029 and lone surrogates escaped (they only
    occur inside JSON strings, where the escapes mean the same)."""
    return _SCRIPT_UNSAFE_RE.sub(_escape_script_char, text)


def _escape_script_char(match: re.Match[str]) -> str:
    char = match.group(0)
    return _SCRIPT_UNSAFE.get(char) or f"\\u{ord(char):04x}"


def html_parts(record: EntryRecord) -> dict[str, Any]:
    """A whole record as the HTML report keeps it (see :func:`parts_of`)."""
    return parts_of(record.model_dump(mode="json"))


_DEFAULTS = {name: field.default for name, field in EntryRecord.model_fields.items()}


def parts_of(fields: dict[str, Any]) -> dict[str, Any]:
    """A record's fields (:func:`record_fields`) as the HTML report keeps them, made once when
    the entry finishes: its index fields and its other fields, each as compact JSON with the
    fields at their defaults left out (a smaller file), in the record's order. Plain text, so
    it rides on the entry's report under xdist, and the run keeps no objects per entry for
    the garbage collector to walk. No model is built: validating and dumping one per entry
    cost more than the rest of the record."""
    index: dict[str, Any] = {}
    details: dict[str, Any] = {}
    for name, value in fields.items():
        if value != _DEFAULTS[name]:
            (index if name in _INDEX else details)[name] = value
    return {
        "index": compact_json(index),
        "details": compact_json(details),
        "category": fields["category"],
        "functions": fields["functions_key"],
    }


# Characters gathered before they are escaped and compressed together.
_CHUNK = 1 << 16

# One thread compresses every stream, in the order its pieces were handed over: zlib works
# without holding the interpreter lock, so on a machine with a core to spare (a run scoring
# stored results keeps one core busy) the page's compression costs the run no time at all.
_PACKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bfcl-html-gzip")


class PackedText:
    """The text of one data element, handed over in script-safe pieces as the run goes: kept
    plain while it is small enough to embed as it is, and gzip-compressed piece by piece on a
    background thread, so the page needs neither a second pass nor a compression at its end."""

    def __init__(self, gzip_above: int = GZIP_ABOVE) -> None:
        self._gzip_above = gzip_above
        self._plain: list[str] | None = []
        self.chars = 0
        self._packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip stream
        self._packed: list[Future[bytes]] = []
        self._finished: bytes | None = None

    def append(self, safe: str) -> None:
        if self._finished is not None:
            raise RuntimeError("text added after the element was read")
        self.chars += len(safe)
        self._packed.append(_PACKER.submit(self._packer.compress, safe.encode("utf-8")))
        if self._plain is not None:
            self._plain.append(safe)
            if self.chars > self._gzip_above:
                self._plain = None  # the page will embed the compressed form

    def result(self) -> tuple[str, bool]:
        """(the element's text, whether it is gzip + base64): plain while small."""
        if self._plain is not None:
            return "".join(self._plain), False
        if self._finished is None:
            parts = [future.result() for future in self._packed]
            self._finished, self._packed = b"".join([*parts, self._packer.flush()]), []
        return base64.b64encode(self._finished).decode("ascii"), True


class _Chunks:
    """Pieces gathered until a chunk is worth escaping and handing to a :class:`PackedText`."""

    def __init__(self, into: PackedText) -> None:
        self.into = into
        self._pending: list[str] = []
        self._chars = 0

    def add(self, text: str) -> None:
        self._pending.append(text)
        self._chars += len(text)
        if self._chars > _CHUNK:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self.into.append(script_safe("".join(self._pending)))
            self._pending, self._chars = [], 0


class HtmlEntries:
    """The HTML report's entries, gathered as they finish: the index rows (JSON), the details
    as script-safe JSON Lines, the function docs they point to (JSON, once per key) and the
    categories they use. Details and docs are compressed as they arrive (:class:`PackedText`);
    the page's data element begins with the docs, so at the end only the index rows and a few
    small fields are left to add."""

    def __init__(self, gzip_above: int = GZIP_ABOVE) -> None:
        self.rows: list[str] = []
        self.functions_keys: set[str] = set()  # keys the entries point to
        self.categories: set[str] = set()
        self._details = _Chunks(PackedText(gzip_above))
        self._data = _Chunks(PackedText(gzip_above))
        self._data.add('{"functions":{')
        self._docs_keys: set[str] = set()  # keys whose docs are in the data already
        self._keys_by_ref: dict[str, str] = {}  # a sender's docs name -> their key

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, parts: dict[str, Any]) -> None:
        if self.rows:
            self._details.add("\n")
        self.rows.append(parts["index"])
        self.categories.add(parts["category"])
        if parts.get("functions") is not None:
            self.functions_keys.add(parts["functions"])
        self._details.add(parts["details"])

    def add_record(self, record: EntryRecord) -> None:
        self.add(html_parts(record))

    def add_packed(self, record: bytes) -> None:
        """A record as it travels from where its entry finished (:mod:`.html_records`)."""
        docs_ref, docs_text, fields = decode_record(record)
        if docs_text is not None:
            key = self._keys_by_ref[docs_ref] = functions_key_of_json(docs_text)
            self.add_functions({key: docs_text})
        fields["functions_key"] = self._keys_by_ref.get(docs_ref)  # keeps the field's place
        self.add(parts_of(fields))

    def add_functions(self, docs: dict[str, str]) -> None:
        """Function docs by key, each as its JSON text (:func:`functions_json`); a key already
        added is skipped (xdist workers each send the docs they meet first)."""
        for key, text in docs.items():
            if key in self._docs_keys:
                continue
            self._data.add(("," if self._docs_keys else "") + compact_json(key) + ":" + text)
            self._docs_keys.add(key)

    def index_json(self) -> str:
        """The index rows as one JSON array."""
        return "[" + ",".join(self.rows) + "]"

    def details(self) -> tuple[str, bool]:
        """(the details' text, whether it is gzip + base64): plain while small."""
        self._details.flush()
        return self._details.into.result()

    def data(self, rest: dict[str, Any]) -> tuple[str, bool]:
        """The page's data element, the function docs gathered so far followed by the index
        rows and ``rest`` (a JSON object's fields): (its text, whether gzip + base64)."""
        fields = compact_json(rest)[1:]  # "}" alone when there are none
        self._data.add('},"records":' + self.index_json() + ("," if rest else "") + fields)
        self._data.flush()
        return self._data.into.result()
