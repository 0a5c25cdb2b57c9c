"""A started server's output, bounded: a line without an end is cut and says how much, the
log stops growing at its cap while the output is still drained, and the excerpt a failure
message shows is bounded whatever the log holds."""

from __future__ import annotations

import io
from pathlib import Path

from pytest_bfcl.servers import server_output
from pytest_bfcl.servers.server_output import TAIL_LINE, copy_redacted, log_tail


class Stream(io.BytesIO):
    """A server's output as the copy reads it; remembers how far it was read."""

    read_to = 0

    def close(self) -> None:
        self.read_to = self.tell()
        super().close()


def copied(output: bytes) -> bytes:
    log = io.BytesIO()
    log.close = lambda: None  # type: ignore[method-assign]  # read it after the copy
    copy_redacted(Stream(output), log)
    return log.getvalue()


def test_lines_are_copied_whole_with_secrets_masked():
    text = copied(b"INFO starting\nINFO --api-key sk-abcdefghijklmnop0123\n")
    assert text.splitlines()[0] == b"INFO starting"
    assert b"sk-abcdefghijklmnop0123" not in text and b"***" in text


def test_a_line_without_an_end_is_cut_and_says_how_much():
    limit = server_output.MAX_LOG_LINE
    text = copied(b"x" * (limit * 5) + b"\nINFO next\n" + b"y" * (limit + 7))
    lines = text.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(b"x" * limit) and b"x" * (limit + 1) not in lines[0]
    assert lines[0].endswith(f"[... {limit * 4 + 1} more bytes of this line cut]".encode())
    assert lines[1] == b"INFO next"
    assert lines[2].endswith(b"[... 7 more bytes of this line cut]")  # cut at the end too


def test_the_log_stops_at_its_cap_and_the_output_is_still_drained(monkeypatch):
    monkeypatch.setattr(server_output, "MAX_LOG_BYTES", 1000)
    stream = Stream(b"a line of output\n" * 10_000)
    log = io.BytesIO()
    log.close = lambda: None  # type: ignore[method-assign]
    copy_redacted(stream, log)
    assert len(log.getvalue()) < 1100 and b"the log is full" in log.getvalue()
    assert stream.read_to == 17 * 10_000  # read to the end: the server never blocks


def test_the_excerpt_is_bounded_whatever_the_log_holds(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(b"early\n" + b"z" * (5 << 20) + b"\nERROR the reason\n")
    tail = log_tail(log)
    assert tail.endswith("ERROR the reason") and "early" not in tail
    assert len(tail) < TAIL_LINE + 200 and "more characters]" in tail
    assert log_tail(tmp_path / "missing.log") == "(no log)"
