"""The gate's word on the entries reported "worse than the baseline, pending the gate", put
into pytest's own record of the session before it prints its summary: an entry behind a
failing comparison becomes a failure (its report, pytest's counts and its line in the short
summary), the others stay expected failures whose reason now says they are within the noise.
The junit file gets the same word from :mod:`pytest_bfcl.report.junit.summary`."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_bfcl.report.pending import RECORDED, Settlement, is_pending


def pending_report(report: pytest.TestReport) -> bool:
    """A BFCL entry's call reported as worse than the baseline, pending the gate."""
    reason = getattr(report, "wasxfail", None)
    return report.when == "call" and isinstance(reason, str) and is_pending(reason)


def recorded_report(report: pytest.TestReport) -> bool:
    """A BFCL entry's call that failed in a run recording a baseline with nothing to compare
    (an expected failure: it is what the baseline records)."""
    reason = getattr(report, "wasxfail", None)
    return report.when == "call" and isinstance(reason, str) and RECORDED in reason


def pending_explanation(report: pytest.TestReport) -> str | None:
    """What a pending entry's report says beyond its reason (its first line): the checker's
    explanation and the baseline's answer beside this run's."""
    parts = str(report.longrepr or "").split("\n", 1)
    return parts[1] if len(parts) > 1 else None


def settle_reports(
    reports: dict[str, pytest.TestReport],
    settlement: Settlement,
    reporter: Any,
    one_line: bool,
) -> set[str]:
    """Settle each pending report (by entry id); returns the ids that became failures.
    ``one_line``: a failure's text is its message alone (the terminal lists BFCL failures a
    line each)."""
    failed: set[str] = set()
    stats = reporter.stats if reporter is not None else {}
    for entry_id, report in reports.items():
        settled = settlement.settle(entry_id, str(report.wasxfail))
        if not settled.failed:
            report.wasxfail = settled.reason
            continue
        explanation = None if one_line else pending_explanation(report)
        report.longrepr = f"{settled.reason}\n{explanation}" if explanation else settled.reason
        del report.wasxfail
        report.outcome = "failed"
        _move(stats, report, "xfailed", "failed")
        failed.add(entry_id)
    return failed


def _move(stats: dict[str, list[Any]], report: Any, source: str, target: str) -> None:
    """Move a report between pytest's terminal counts (``terminalreporter.stats``)."""
    held = stats.get(source, [])
    for index, other in enumerate(held):
        if other is report:
            del held[index]
            break
    else:
        return
    if not held:
        stats.pop(source, None)
    stats.setdefault(target, []).append(report)
