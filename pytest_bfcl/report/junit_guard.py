"""A ``--junitxml`` path that cannot be written, found at the session's start: pytest's writer
would raise at the end, before any other report is written (a read-only file, a link to a
folder that is not there), with a long traceback. Found early, the writer is switched off and
the file is one "not written" line; every other report is written as usual."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from pytest_bfcl.files import os_error_text
from pytest_bfcl.pytest_private import junit_logfile, switch_junit_writer_off


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
