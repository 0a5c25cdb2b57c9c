"""A started server's output, bounded: copied into its log line by line with secrets masked,
a line without an end cut (a progress bar, a flood), the log itself capped, and the end of the
log read back as a bounded excerpt for a failure message.

A server's output is the model's world, not the plugin's: whatever it prints, the plugin's
memory and the failure message stay small, and the copy never stops draining (a full pipe
would hang the server).
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import IO

from pytest_bfcl.files import read_file_tail
from pytest_bfcl.redact import redact_text

MAX_LOG_LINE = 16 << 10  # bytes of one line kept; the rest of the line is cut
MAX_LOG_BYTES = 512 << 20  # bytes written to a log; later output is read and dropped
DRAIN_CHUNK = 1 << 20  # bytes read at once from output that is dropped
TAIL_BYTES = 64 << 10  # bytes of the log's end a failure message is taken from
TAIL_LINE = 500  # characters of one line a failure message shows


def copy_redacted(stream: IO[bytes], log: IO[bytes]) -> None:
    """Copy the server's output into its log until the server and every process it started
    have closed their output; then close both. Each line keeps its first
    :data:`MAX_LOG_LINE` bytes (secrets masked) and says how much of it was cut; after
    :data:`MAX_LOG_BYTES` the log says so once and the rest is drained unwritten."""
    with stream, log:
        written = 0
        while True:
            line = stream.readline(MAX_LOG_LINE)
            if not line:
                return
            text = _masked(line)
            if not line.endswith(b"\n"):
                cut = _drain_line(stream)
                text += f" [... {cut} more bytes of this line cut]\n" if cut else "\n"
            data = text.encode("utf-8")
            if written + len(data) > MAX_LOG_BYTES:
                log.write(
                    f"[the log is full ({MAX_LOG_BYTES:,} bytes): the rest is left out]\n".encode()
                )
                log.flush()
                _drain(stream)
                return
            log.write(data)
            log.flush()
            written += len(data)


def _masked(line: bytes) -> str:
    try:
        return redact_text(line.decode("utf-8", errors="replace"))
    except Exception:  # never stop draining
        return "(a line that could not be checked for secrets was left out)\n"


def _drain_line(stream: IO[bytes]) -> int:
    """Read and drop the rest of the current line (up to its newline or the end of the
    output); how many bytes that was."""
    dropped = 0
    while True:
        chunk = stream.readline(DRAIN_CHUNK)
        dropped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return dropped


def _drain(stream: IO[bytes]) -> None:
    while stream.read(DRAIN_CHUNK):
        pass


def log_tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of a log, from its last :data:`TAIL_BYTES` only, each cut to
    :data:`TAIL_LINE` characters: a bounded excerpt whatever the log holds."""
    try:
        data = read_file_tail(path, TAIL_BYTES)  # a FIFO or a device there is never opened
    except OSError:
        return "(no log)"
    text = data.decode("utf-8", errors="replace")
    last = deque(text.splitlines(), maxlen=lines)
    return "\n".join(_cut(line) for line in last).rstrip()


def _cut(line: str) -> str:
    if len(line) <= TAIL_LINE:
        return line
    return f"{line[:TAIL_LINE]} [... {len(line) - TAIL_LINE} more characters]"
