"""pytest-bfcl's per-entry verdicts, read back from the junit file of a run.

Every benchmark testcase carries ``bfcl_id`` and ``bfcl_category``; a scored one carries
``bfcl_valid`` and, when it failed, ``bfcl_error_type``. Testcases without ``bfcl_valid``
(skipped, or errored before scoring) are reported as not scored, with the reason pytest gave.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.conformance.score_files import EntryVerdict


class JunitError(ValueError):
    """The junit file is missing or unreadable."""


class NotScored(BaseModel):
    """A testcase of the run that has no verdict."""

    model_config = ConfigDict(frozen=True)

    id: str
    category: str
    reason: str


class JunitVerdicts(BaseModel):
    verdicts: dict[str, EntryVerdict]
    not_scored: dict[str, NotScored]


def _properties(testcase: ET.Element) -> dict[str, str]:
    return {
        prop.get("name", ""): prop.get("value", "")
        for prop in testcase.iterfind("./properties/property")
    }


def _why_not_scored(testcase: ET.Element, props: dict[str, str]) -> str:
    if props.get("bfcl_skipped"):
        return props["bfcl_skipped"]
    for tag in ("skipped", "error", "failure"):
        element = testcase.find(tag)
        if element is not None:
            return f"{tag}: {(element.get('message') or element.text or '').strip()[:200]}"
    return "no verdict recorded"


def read_junit_verdicts(path: Path) -> JunitVerdicts:
    """Verdicts by entry id (the run's summary testcases, which have no ``bfcl_id``, are left
    out)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise JunitError(f"cannot read the junit file {path}: {exc}") from exc
    verdicts: dict[str, EntryVerdict] = {}
    not_scored: dict[str, NotScored] = {}
    for testcase in root.iter("testcase"):
        props = _properties(testcase)
        entry_id = props.get("bfcl_id")
        if not entry_id:
            continue
        category = props.get("bfcl_category", "")
        if "bfcl_valid" in props:
            verdicts[entry_id] = EntryVerdict(
                id=entry_id,
                category=category,
                valid=props["bfcl_valid"] == "true",
                error_type=props.get("bfcl_error_type") or None,
            )
        else:
            not_scored[entry_id] = NotScored(
                id=entry_id, category=category, reason=_why_not_scored(testcase, props)
            )
    return JunitVerdicts(verdicts=verdicts, not_scored=not_scored)
