"""BFCL items' reports on their way from an xdist worker to the controller, packed with
:mod:`marshal`.

xdist sends every report as the nested dict pytest makes of it (``_to_json``), which its
channel library serialises and parses again in Python, value by value, on both sides: with
three reports per entry that cost more than scoring a stored result. A BFCL item's report
travels instead as that same dict packed by :mod:`marshal` (C speed) inside a one-key dict,
and the controller unpacks it and lets pytest build the report from it as before. A report
holding a value marshal refuses (an object a fixture recorded as a property, say) travels the
usual way.
"""

from __future__ import annotations

import marshal
from typing import Any

import pytest

from pytest_bfcl.pytest_private import report_fields, report_from_fields

PACKED = "bfcl_packed"  # the key of the packed report
_TYPE = "$report_type"
_PACKED_TYPE = "BfclPackedTestReport"


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
    """The report :func:`pack_report` packed, with what xdist added to the dict on its way
    (the item's index, the worker's id); None for anything else."""
    if data.get(_TYPE) != _PACKED_TYPE:
        return None
    fields = marshal.loads(data[PACKED])
    fields.update((k, v) for k, v in data.items() if k not in (_TYPE, PACKED))
    return report_from_fields(fields)
