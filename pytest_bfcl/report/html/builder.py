"""The HTML report's entries built in a process of their own, on a core the run leaves idle.

Scoring stored results keeps one core busy, and rendering each entry's record for the page
(bounding its texts, JSON, keying its function docs, compressing) cost a fifth as much again
on that core. With ``--bfcl-html`` a session that owns its process starts this builder at its
start (this module, on the session's import path), sends it each entry's packed record
(:mod:`.html_records`) through a pipe as entries finish, and at the end asks it for the page's
two data elements. The page is the same as when the session renders the records itself
(:meth:`HtmlEntries.add_packed`: on one core, inside another program, or with
``PYTEST_BFCL_HTML_BUILDER=0``).

A builder that cannot start leaves the work to the session; one that ends early makes the
HTML report "not written", with its exit status and last words, and nothing else is lost; so
does one stopped (SIGSTOP) or hung while the session waits for its answer
(:mod:`.answer_deadline`).

Frames on both pipes: a byte naming the frame, a 4-byte length, a :mod:`marshal` payload.
"""

from __future__ import annotations

import marshal
import os
import queue
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any

from pytest_bfcl.report.html.answer_deadline import read_by_deadline
from pytest_bfcl.report.html.entries import HtmlEntries

_HEAD = struct.Struct(">BI")
_RECORDS, _FINISH, _PAGE = 1, 2, 3
# Bytes of records gathered before they are written to the pipe in one call.
_BATCH = 1 << 18
ENV_SWITCH = "PYTEST_BFCL_HTML_BUILDER"  # "0": render records in the session

# The builder's start: the session's own import path (not the working directory's first, as
# ``-m`` would have it: a stale copy of the package there, or one only the session's path
# reaches, would build another page or none), Ctrl-C left to the session, then the loop.
_BOOTSTRAP = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "sys.path[:] = sys.argv[1:]; "
    "from pytest_bfcl.report.html.builder import main; sys.exit(main())"
)


def _import_path() -> list[str]:
    """The builder's ``sys.path``: the session's, behind the folder this package was loaded
    from (which a relative entry like ``''`` might no longer lead to)."""
    root = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    )
    return [root, *(p for p in sys.path if isinstance(p, str))]


class HtmlBuilderError(OSError):
    """The builder process ended before the page was built (the HTML report is not written)."""


def builder_wanted() -> bool:
    """Whether a builder process would help: a core to spare, and not switched off."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores >= 2


class HtmlBuilder:
    """The session's side of a builder process; for the page it offers what
    :class:`HtmlEntries` does (its length, categories, data and details elements)."""

    def __init__(self, process: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
        self._process = process
        self._stderr = stderr
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._failure: str | None = None
        # A thread of its own writes to the pipe: a write blocks until the builder has read
        # most of it, which the session's thread would otherwise wait for.
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._broken = threading.Event()  # set when a write to the pipe failed
        self._writer = threading.Thread(target=self._write_all, name="bfcl-html-pipe", daemon=True)
        self._writer.start()
        self._count: int | None = None
        self._categories: set[str] = set()
        self._elements: tuple[str, bool, str, bool] | None = None

    @classmethod
    def start(cls) -> HtmlBuilder | None:
        """A builder process, or None when one cannot be started (the session renders)."""
        stderr = tempfile.TemporaryFile()  # noqa: SIM115  (kept open for the process's life)
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP, *_import_path()],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                # Out of the terminal's process group: Ctrl-C interrupts the session, which
                # still asks the builder for the page of what ran.
                start_new_session=os.name == "posix",
            )
        except OSError:
            stderr.close()
            return None
        return cls(process, stderr)

    # -- records, as entries finish -------------------------------------------------------

    def add_packed(self, record: bytes) -> None:
        if self._broken.is_set():
            return  # the builder is gone: the page will not be written, nothing to keep
        self._pending.append(_HEAD.pack(_RECORDS, len(record)))
        self._pending.append(record)
        self._pending_bytes += len(record)
        if self._pending_bytes >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        data, self._pending, self._pending_bytes = b"".join(self._pending), [], 0
        if data:
            self._outbox.put(data)

    def _write_all(self) -> None:
        """The pipe writer's loop, until the outbox's end (None) or a broken pipe."""
        stdin = self._process.stdin
        assert stdin is not None
        while (data := self._outbox.get()) is not None:
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError):
                self._broken.set()
                return  # the builder is gone: reading its answer says why

    # -- the page ---------------------------------------------------------------------------

    def __len__(self) -> int:
        self._finish()
        assert self._count is not None
        return self._count

    @property
    def categories(self) -> set[str]:
        self._finish()
        return self._categories

    def data(self, rest: dict[str, Any]) -> tuple[str, bool]:
        if self._elements is None:
            self._finish()
            self._send(_PAGE, rest)
            self._elements = self._receive()
        return self._elements[0], self._elements[1]

    def details(self) -> tuple[str, bool]:
        if self._elements is None:
            raise RuntimeError("the details come with the data element")
        return self._elements[2], self._elements[3]

    def _finish(self) -> None:
        if self._count is None:
            self._flush()
            self._send(_FINISH, None)
            count, categories = self._receive()
            self._count, self._categories = count, set(categories)

    def _send(self, kind: int, value: Any) -> None:
        if self._failure is not None:
            raise HtmlBuilderError(self._failure)
        payload = marshal.dumps(value, 4)
        self._outbox.put(_HEAD.pack(kind, len(payload)) + payload)

    def _receive(self) -> Any:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            frame = read_by_deadline(self._process, lambda: read_frame(stdout))
        except TimeoutError as exc:  # stopped or hung: ended, and the page is not written
            self._process.kill()
            self._failure = f"the HTML report's builder process {exc}; it was ended"
            raise HtmlBuilderError(self._failure) from None
        except OSError:
            frame = None
        if frame is None:
            self._failure = self._ended("before it sent the page")
            raise HtmlBuilderError(self._failure)
        return marshal.loads(frame[1])

    def _ended(self, when: str) -> str:
        """Why the builder stopped answering, in a line."""
        try:
            status = self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            status = self._process.wait()
        self._stderr.seek(0)
        words = self._stderr.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
        last = f": {words[-1]}" if words else ""
        return f"the HTML report's builder process ended {when} (exit status {status}){last}"

    def close(self) -> None:
        """End the process (the page is built, or will not be)."""
        self._outbox.put(None)
        self._writer.join(timeout=5)
        for stream in (self._process.stdin, self._process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._stderr.close()


def read_frame(stream: IO[bytes]) -> tuple[int, bytes] | None:
    """The next frame, or None at the end of the stream."""
    head = stream.read(_HEAD.size)
    if len(head) < _HEAD.size:
        return None
    kind, size = _HEAD.unpack(head)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return kind, payload


def write_frame(stream: IO[bytes], kind: int, value: Any) -> None:
    payload = marshal.dumps(value, 4)
    stream.write(_HEAD.pack(kind, len(payload)) + payload)
    stream.flush()


def serve(source: IO[bytes], answers: IO[bytes]) -> int:
    """The builder's loop: records until asked for the page, then the page's elements."""
    entries = HtmlEntries()
    while (frame := read_frame(source)) is not None:
        kind, payload = frame
        if kind == _RECORDS:
            entries.add_packed(payload)
        elif kind == _FINISH:
            write_frame(answers, _FINISH, (len(entries), sorted(entries.categories)))
        elif kind == _PAGE:
            data, data_packed = entries.data(marshal.loads(payload))
            details, details_packed = entries.details()
            write_frame(answers, _PAGE, (data, data_packed, details, details_packed))
            return 0
    return 0  # the session ended without a page (interrupted): nothing to write


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the session's to handle
    return serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())
