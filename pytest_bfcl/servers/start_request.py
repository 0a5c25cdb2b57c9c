"""Servers that xdist workers share, started by the controller only when a worker first needs
one: a run answered from the response cache starts none, under ``-n`` too.

The controller owns the servers (their processes, ports and logs); the workers know only their
addresses. A worker whose request the cache cannot answer creates the *request* file; the
controller, which watches for it from the start of the session, starts the servers and writes
the *ready* file, or the *failed* file with why they could not start. Every worker waits for
one of the two (the first request starts the servers once for all). Files, not xdist's
channel: a worker can only send to the controller between tests, and the wait happens inside
one.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from pytest_bfcl.files import read_problem, read_small_text, write_text_atomic
from pytest_bfcl.servers.server_process import ServerStartError

POLL_S = 0.05  # how often each side looks at the files
MARGIN_S = 60.0  # a worker waits this much longer than the controller's start may take


class StartRequest:
    """The three files of one session's request to start its servers."""

    def __init__(self, request: Path, timeout: float) -> None:
        """``request``: the request file's path; ``timeout``: how long a start may take."""
        self.request = request
        self.ready = request.with_suffix(".ready")
        self.failed = request.with_suffix(".failed")
        self.timeout = timeout
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()

    @classmethod
    def beside(cls, log: Path, timeout: float) -> StartRequest:
        """A new request for this session, in the folder of the servers' logs."""
        log.parent.mkdir(parents=True, exist_ok=True)
        return cls(log.parent / f"start-{uuid.uuid4().hex[:12]}.request", timeout)

    # -- in a worker ----------------------------------------------------------------------------

    def ask(self) -> None:
        """Ask the controller to start the servers, and wait until they are healthy; a start
        that failed (or never came) is a :class:`ServerStartError`."""
        self.request.touch()
        deadline = time.monotonic() + self.timeout + MARGIN_S
        while time.monotonic() < deadline:
            if self.ready.exists():
                return
            if self.failed.exists():
                raise ServerStartError(_message(self.failed))
            time.sleep(POLL_S)
        raise ServerStartError(
            f"the session's controller did not start the model servers within "
            f"{self.timeout + MARGIN_S:.0f} s of a worker's request ({self.request})"
        )

    # -- in the controller ----------------------------------------------------------------------

    def serve(self, start: Callable[[], None]) -> None:
        """Watch for a worker's request (in a thread) and answer it with ``start()``."""
        if self._watcher is None:
            self._watcher = threading.Thread(
                target=self._answer, args=(start,), name="bfcl-start-request", daemon=True
            )
            self._watcher.start()

    def _answer(self, start: Callable[[], None]) -> None:
        while not self.request.exists():
            if self._stop.wait(POLL_S):
                return
        try:
            start()
        except ServerStartError as exc:
            self._publish(self.failed, str(exc))
        except Exception as exc:  # any failure to start is said to the waiting workers
            self._publish(self.failed, f"{type(exc).__name__}: {exc}")
        else:
            self._publish(self.ready, "")

    @staticmethod
    def _publish(path: Path, text: str) -> None:
        write_text_atomic(path, text)  # a worker never reads half a message

    def close(self) -> None:
        """Stop watching, and remove the files."""
        self._stop.set()
        for path in (self.request, self.ready, self.failed):
            path.unlink(missing_ok=True)


MESSAGE_MAX = 64 << 10  # bytes of a start failure read back (its log tail is bounded)


def _message(path: Path) -> str:
    """The controller's failure notice; what is wrong with it when it cannot be read."""
    try:
        return read_small_text(path, MESSAGE_MAX, follow_symlinks=False)
    except (OSError, ValueError) as exc:
        return f"the servers did not start, and their failure notice {path} is unreadable: " + (
            read_problem(exc)
        )
