"""What one item tells the controller about its entry, as junit properties.

Items write these pairs into their report's ``user_properties`` (which junit files and
pytest-xdist both carry); the controller reads them back. One record type keeps the names in
one place.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

PREFIX = "bfcl_"


@dataclass
class ItemProperties:
    id: str | None = None
    category: str | None = None
    baseline_valid: bool | None = None
    valid: bool | None = None
    # An entry asked several times (--bfcl-samples): samples that passed, and how many.
    passes: int | None = None
    samples: int | None = None
    error_type: str | None = None
    reason: str | None = None  # the checker's first reason, one line
    skipped: str | None = None  # why the entry was not scored
    excluded: bool | None = None  # the run's own options left it out
    latency: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    steps: int | None = None
    cached_steps: int | None = None  # of those, answered from the response cache
    known_error: str | None = None  # the entry's ground truth is known to be wrong upstream
    search_failures: int | None = None  # web searches that failed (web-search entries)
    fetch_failures: int | None = None  # page fetches that failed
    # An entry that improved on the baseline: its answer there and now (a regression's are in
    # its failure's text).
    baseline_answer: str | None = None
    answer: str | None = None

    def pairs(self, *names: str) -> list[tuple[str, Any]]:
        """``(bfcl_<name>, value)`` for the given fields (all when none), skipping unset ones;
        booleans as ``true``/``false`` as junit readers expect."""
        out = []
        for name in names or _FIELD_NAMES:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool):
                value = "true" if value else "false"
            # One key string per property name: a run keeps every item's pairs, three times
            # over in its reports.
            out.append((_KEYS[name], value))
        return out

    @classmethod
    def from_pairs(cls, pairs: list[tuple[str, Any]]) -> ItemProperties:
        # Read for every report a controller gets: a lookup per pair, nothing built per call.
        values: dict[str, Any] = {}
        for key, value in pairs:
            name = _NAMES.get(key)
            if name is not None:
                values[name] = _parse(name, value)
        return cls(**values)


_FIELD_NAMES = tuple(f.name for f in fields(ItemProperties))
_KEYS = {name: PREFIX + name for name in _FIELD_NAMES}
_NAMES = {key: name for name, key in _KEYS.items()}
_BOOLEANS = {"baseline_valid", "valid", "excluded"}
_TEXTS = {
    "id",
    "category",
    "error_type",
    "reason",
    "skipped",
    "known_error",
    "baseline_answer",
    "answer",
}


def _parse(name: str, value: Any) -> Any:
    if name in _BOOLEANS:
        return value is True or value == "true"
    if name in _TEXTS:
        return str(value)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
