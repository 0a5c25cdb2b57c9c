"""A pytest plugin for :mod:`xdist_phases` (``-p phase_log``): each process (the controller and
every xdist worker) appends when it reached each phase of a run, in wall seconds since
``BFCL_PHASES_T0`` and in its own CPU seconds, to the file ``BFCL_PHASES_FILE``."""

from __future__ import annotations

import os
import time

import pytest

_T0 = float(os.environ.get("BFCL_PHASES_T0", "0") or 0)
_reports = 0


def _log(phase: str) -> None:
    path = os.environ.get("BFCL_PHASES_FILE")
    if not path:
        return
    role = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"{role}\t{phase}\t{time.time() - _T0:.3f}\t{time.process_time():.3f}\n")


def pytest_configure(config: pytest.Config) -> None:
    _log("configured")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _log("collected")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _reports
    _reports += 1
    if _reports == 1:
        _log("first report")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _log("last report")


def pytest_unconfigure(config: pytest.Config) -> None:
    _log("done")
