"""A ``--junitxml`` path that cannot be written: pytest's writer would raise at the session's
end, before any other report is written (a read-only file, a link to a folder that is not
there), with a long traceback. Found at the start, the writer is switched off; failing only at
the end (a disk that filled up), its error is caught around the finish hooks, which then run.
Either way the file is one "not written" line and every other report is written as usual."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator
from pathlib import Path
from typing import Any, Protocol

import pytest

from pytest_bfcl.files import os_error_text
from pytest_bfcl.pytest_private import (
    junit_logfile,
    raised_by_junit_writer,
    switch_junit_writer_off,
)


def _writable(path: Path) -> str | None:
    """Why ``path`` cannot be written, or None; a file made to find out is removed again."""
    existed = os.path.lexists(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # as pytest's writer does
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        return os_error_text(exc)
    if not existed:
        with contextlib.suppress(OSError):
            path.unlink()
    return None


def refuse_unwritable_junit(config: pytest.Config) -> str | None:
    """Switch pytest's junit writer off when its file cannot be written; why, or None."""
    logfile = junit_logfile(config)
    if logfile is None:
        return None
    problem = _writable(Path(logfile))
    if problem is None:
        return None
    switch_junit_writer_off(config)
    return problem


class _Finisher(Protocol):
    junit_refused: str | None
    finished: Any

    def pytest_sessionfinish(self, session: pytest.Session) -> None: ...


class JunitWriteGuard:
    """Around every session-finish hook: an OSError of pytest's junit writer (which runs
    before the session's own finish, and would skip it) becomes the junit file's "not
    written" line, and the session's finish runs all the same."""

    def __init__(self, session_plugin: _Finisher) -> None:
        self._plugin = session_plugin

    # Innermost of the wrappers: the terminal's summary (which wraps from outside) still
    # comes after the session's finish.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, Any]:
        try:
            return (yield)
        except OSError as exc:
            if not raised_by_junit_writer(exc) or self._plugin.finished is not None:
                raise
            self._plugin.junit_refused = os_error_text(exc)
            self._plugin.pytest_sessionfinish(session)
            return None
