"""Waiting for a helper process's answer by a deadline: a process that was stopped (SIGSTOP,
a terminal's job control) or hangs must not keep the session waiting forever after its last
entry. A stopped one is given a few seconds to be continued; a running one a generous deadline
for its answer."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from pytest_bfcl.processes import is_stopped

T = TypeVar("T")

STOPPED_GRACE = 5.0  # seconds a stopped process may stay stopped while its answer is awaited
ANSWER_DEADLINE = 300.0  # seconds a running process has to answer


def read_by_deadline(process: subprocess.Popen[bytes], read: Callable[[], T]) -> T:
    """``read()``'s result, read in a thread of its own; :class:`TimeoutError` saying why when
    the process stays stopped for :data:`STOPPED_GRACE` or does not answer within
    :data:`ANSWER_DEADLINE` (the caller ends the process, which ends the read)."""
    box: list[tuple[bool, object]] = []

    def reader() -> None:
        try:
            box.append((True, read()))
        except BaseException as exc:  # handed to the waiting thread
            box.append((False, exc))

    thread = threading.Thread(target=reader, name="bfcl-answer-reader", daemon=True)
    thread.start()
    started = time.monotonic()
    stopped_since: float | None = None
    while True:
        thread.join(0.1)
        if box:
            ok, value = box[0]
            if ok:
                return value  # type: ignore[return-value]
            raise value  # type: ignore[misc]
        now = time.monotonic()
        if is_stopped(process.pid):
            stopped_since = stopped_since or now
            if now - stopped_since >= STOPPED_GRACE:
                raise TimeoutError(f"was stopped (SIGSTOP) for {STOPPED_GRACE:g} s")
        else:
            stopped_since = None
        if now - started >= ANSWER_DEADLINE:
            raise TimeoutError(f"did not answer within {ANSWER_DEADLINE:g} s")
