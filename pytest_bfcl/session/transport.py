"""BFCL items' reports on their way from an xdist worker to the controller, packed with
:mod:`marshal`.

xdist sends every report as the nested dict pytest makes of it (``_to_json``), which its
channel library serialises and parses again in Python, value by value, on both sides: with
three reports per entry that cost more than scoring a stored result. A BFCL item's report
travels instead as that same dict packed by :mod:`marshal` (C speed) inside a one-key dict,
and the controller unpacks it and lets pytest build the report from it as before. A report
holding a value marshal refuses (an object a fixture recorded as a property, say) travels the
usual way.

Where the worker batches its events (:mod:`.batching`, which packs them all at once), a BFCL
item's plain report travels as the values pytest's serialisation would write, in the order
``TestReport`` takes them (:func:`compact_report`), and the controller calls ``TestReport``
with them (:func:`report_from_compact`): pytest's serialisation, through its hook, cost the
worker 0.8 G instructions on 4,441 entries (13,323 reports), a twentieth of scoring them. The
rebuilt report is the one pytest's own reading rebuilds from the dict xdist would have sent,
attribute for attribute and in the same order. A report whose longrepr is not text (an error's
traceback), or with a path among its values (which pytest's serialisation turns into text),
travels the usual way.
"""

from __future__ import annotations

import marshal
import os
from typing import Any

import pytest

from pytest_bfcl.pytest_private import node_id_of, report_fields, report_from_fields

PACKED = "bfcl_packed"  # the key of the packed report
COMPACT = "bfcl_compact"  # the key of a compact report's values
_TYPE = "$report_type"
_PACKED_TYPE = "BfclPackedTestReport"
_COMPACT_TYPE = "BfclCompactTestReport"
# What TestReport takes after the node id, in its order; any other attribute is an extra.
_FIELDS = (
    "location", "keywords", "outcome", "longrepr", "when", "sections", "duration", "start",
    "stop", "user_properties",
)  # fmt: skip
# Attributes that are not extras: the node id (pytest 9 keeps it as ``_id``) and the fields.
_NOT_EXTRA = frozenset(("nodeid", "_id", *_FIELDS))
# Types none of whose values is a path: os.PathLike's own check is slower.
_NOT_PATHS = frozenset((str, int, float, tuple, list, dict, type(None), bool, bytes))


def pack_report(report: Any, prefix: str) -> dict[str, Any] | None:
    """A BFCL item's test report as xdist sends it, packed; None for any other report (or one
    marshal refuses), which pytest's own hook then serialises."""
    if type(report) is not pytest.TestReport or not report.nodeid.startswith(prefix):
        return None
    data = report_fields(report)
    data[_TYPE] = "TestReport"
    try:
        packed = marshal.dumps(data, 4)
    except ValueError:
        return None
    return {_TYPE: _PACKED_TYPE, PACKED: packed}


def unpack_report(data: dict[str, Any]) -> pytest.TestReport | None:
    """The report :func:`pack_report` packed or :func:`compact_report` made, with what xdist
    added to the dict on its way (the item's index, the worker's id); None for anything
    else."""
    if is_compact(data):
        return report_from_compact(data)
    if data.get(_TYPE) != _PACKED_TYPE:
        return None
    fields = marshal.loads(data[PACKED])
    fields.update((k, v) for k, v in data.items() if k not in (_TYPE, PACKED))
    return report_from_fields(fields)


def compact_report(report: Any, prefix: str) -> dict[str, Any] | None:
    """A BFCL item's test report as the values pytest's serialisation writes, in a tuple;
    None for any other report, or one that pytest's serialisation must write (a longrepr that
    is not text, a value that is a path, a ``result`` attribute)."""
    if type(report) is not pytest.TestReport:
        return None
    nodeid = report.nodeid
    longrepr = report.longrepr
    if not nodeid.startswith(prefix) or (longrepr is not None and type(longrepr) is not str):
        return None
    attributes = report.__dict__
    extra = {}
    for name, value in attributes.items():
        if type(value) not in _NOT_PATHS and isinstance(value, os.PathLike):
            return None
        if name not in _NOT_EXTRA:
            if name == "result":
                return None
            extra[name] = value
    values = (nodeid, *[attributes[name] for name in _FIELDS], extra)
    return {_TYPE: _COMPACT_TYPE, COMPACT: values}


def is_compact(data: dict[str, Any]) -> bool:
    return data.get(_TYPE) == _COMPACT_TYPE


def report_from_compact(data: dict[str, Any], node_id: Any = None) -> pytest.TestReport:
    """The report :func:`compact_report` made, with what xdist added to the dict on its way
    (the item's index, the worker's id), and the report type pytest's own reading leaves on
    what it rebuilds, in the order that reading leaves them. ``node_id``: the node id as
    pytest keeps it (:func:`.pytest_private.node_id_of`) of an earlier report of the same item,
    which spares pytest parsing the text again."""
    values = data[COMPACT]
    # the report's extras, then what xdist added (its values win, as in pytest's reading)
    extra = {**values[-1], **data}
    del extra[COMPACT]
    extra[_TYPE] = "TestReport"
    return pytest.TestReport(node_id or values[0], *values[1:-1], **extra)


class CompactReader:
    """Rebuilds compact reports in the order they arrive. An item's three reports come one
    after the other, so each one after the first takes the node id pytest made of the first
    one's (pytest 9 parses the text into a structure for every report it builds)."""

    def __init__(self) -> None:
        self._text = ""
        self._id: Any = None

    def __call__(self, data: dict[str, Any]) -> pytest.TestReport:
        text = data[COMPACT][0]
        if text != self._text:
            report = report_from_compact(data)
            self._text, self._id = text, node_id_of(report)
            return report
        return report_from_compact(data, self._id)
