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

# Once the run writes its reports nothing is asked of a server any more, and the servers stop
# right after: a SIGTERM then lets the reports be written rather than cut them short.
_winding_down = threading.Event()


def winding_down() -> None:
    """From now on SIGTERM is ignored: the run is writing its reports, then stops."""
    _winding_down.set()


def stop_on_sigterm(config: pytest.Config) -> None:
    """From now until ``config``'s cleanup, SIGTERM raises :class:`Terminated` in the main
    thread (once: one that follows is ignored while the run winds down; none once the reports
    are being written, :func:`winding_down`). A handler someone else installed is left in
    place."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):
        return

    _winding_down.clear()

    def terminated(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if not _winding_down.is_set():
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
