"""Text someone else supplied, as a terminal, a log or a header may show it: secrets masked
(:mod:`pytest_bfcl.redact`), and the characters that would let it act on the terminal written
as escapes."""

from __future__ import annotations

import re
from typing import Any

from pytest_bfcl.redact import redact_text

# Control characters, bidirectional controls and lone surrogates: printed raw, a field could
# clear a terminal, forge a line of a CI log or reorder the characters around it.
_OTHER_UNPRINTABLE = r"\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNPRINTABLE = re.compile(rf"[\x00-\x1f{_OTHER_UNPRINTABLE}]")
# The same, tabs and line breaks kept: every line of a text escaped in one pass, indented as
# its writer laid it out.
_UNPRINTABLE_IN_LINES = re.compile(rf"[\x00-\x08\x0b-\x1f{_OTHER_UNPRINTABLE}]")
FIELD_LIMIT = 200  # characters of a field printed on a line of its own


def escaped(text: str) -> str:
    """``text`` with control and bidirectional characters and lone surrogates written as
    ``\\uXXXX`` escapes: one line, read as it is stored."""
    return _UNPRINTABLE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(value: Any, limit: int = FIELD_LIMIT) -> str:
    """A field someone else supplied (a baseline's model or time, a server's words, a custom
    category's id): secrets masked, control and bidirectional characters and lone surrogates
    escaped, at most ``limit`` characters."""
    text = escaped(redact_text(value if isinstance(value, str) else str(value)))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def printable_lines(text: str, limit: int | None = 2000) -> str:
    """Text of several lines (a refusal, a server's error, a failure's explanation): secrets
    masked, and in each line control and bidirectional characters and lone surrogates
    escaped, each line at most ``limit`` characters."""
    text = _UNPRINTABLE_IN_LINES.sub(_escape, redact_text(text).replace("\r\n", "\n"))
    if limit is None:
        return text
    lines = text.split("\n")
    return "\n".join(line if len(line) <= limit else line[: limit - 3] + "..." for line in lines)
