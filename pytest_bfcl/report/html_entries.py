"""The HTML report's form of an entry record, made once as the entry finishes: the index row
the entry lists need, and the details as one script-safe JSON line, compressed in chunks as
records arrive (:class:`HtmlEntries`), so writing the page needs no second pass over them."""

from __future__ import annotations

import base64
import json
import re
import zlib
from typing import Any

from pytest_bfcl.report.entries import EntryRecord

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


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


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


# Characters of details gathered before they are escaped and compressed together.
_CHUNK = 1 << 16


class HtmlEntries:
    """The HTML report's entries, gathered as they finish: the index rows (JSON), the details
    as script-safe JSON Lines compressed in chunks as they arrive, the function-doc keys and
    categories they use. The page is written from this at the end without another pass over
    the entries; the plain text is kept only while it is small enough to embed as it is."""

    def __init__(self, gzip_above: int = GZIP_ABOVE) -> None:
        self.rows: list[str] = []
        self.functions_keys: set[str] = set()
        self.categories: set[str] = set()
        self._gzip_above = gzip_above
        self._pending: list[str] = []
        self._pending_chars = 0
        self._plain: list[str] | None = []
        self._chars = 0  # script-safe characters so far
        self._packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip stream
        self._packed: list[bytes] = []
        self._finished: bytes | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, parts: dict[str, Any]) -> None:
        if self._finished is not None:
            raise RuntimeError("entries added after the details were read")
        if self.rows:
            self._pending.append("\n")
        self.rows.append(parts["index"])
        self.categories.add(parts["category"])
        if parts.get("functions") is not None:
            self.functions_keys.add(parts["functions"])
        self._pending.append(parts["details"])
        self._pending_chars += len(parts["details"])
        if self._pending_chars > _CHUNK:
            self._flush()

    def add_record(self, record: EntryRecord) -> None:
        self.add(html_parts(record))

    def index_json(self) -> str:
        """The index rows as one JSON array."""
        return "[" + ",".join(self.rows) + "]"

    def _flush(self) -> None:
        chunk = script_safe("".join(self._pending))
        self._pending, self._pending_chars = [], 0
        self._chars += len(chunk)
        self._packed.append(self._packer.compress(chunk.encode("utf-8")))
        if self._plain is not None:
            self._plain.append(chunk)
            if self._chars > self._gzip_above:
                self._plain = None  # the page will embed the compressed form

    def details(self) -> tuple[str, bool]:
        """(the details' text, whether it is gzip + base64): plain while small."""
        if self._pending:
            self._flush()
        if self._plain is not None and self._chars <= self._gzip_above:
            return "".join(self._plain), False
        if self._finished is None:
            self._packed.append(self._packer.flush())
            self._finished, self._packed = b"".join(self._packed), []
        return base64.b64encode(self._finished).decode("ascii"), True
