"""SIGTERM ends a run as Ctrl-C does: pytest's interrupted run (its exit status, the reports
of what was scored written), and every server the plugin started stopped with its temporary
folder removed. Without this, SIGTERM (what a CI job's timeout or ``kill`` sends) ends the
interpreter at once and leaves the servers, which run in process groups of their own, behind.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest


class Terminated(KeyboardInterrupt):
    """The run was stopped by SIGTERM: pytest handles it as an interruption."""


MESSAGE = "stopped by SIGTERM; the servers the run started are stopped"


def stop_on_sigterm(config: pytest.Config) -> None:
    """From now until ``config``'s cleanup, SIGTERM raises :class:`Terminated` in the main
    thread (once: one that follows is ignored while the run winds down). A handler someone
    else installed is left in place."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):
        return

    def terminated(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated(MESSAGE)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    signal.signal(signal.SIGTERM, terminated)
    config.add_cleanup(restore)


def interrupted_at_start(exc: KeyboardInterrupt) -> str:
    """The line for an interruption while the run is set up (a server starting, say)."""
    cause = "stopped by SIGTERM" if isinstance(exc, Terminated) else "interrupted"
    return (
        f"pytest-bfcl: {cause} while the run was being set up; the servers it started are stopped"
    )
