"""Small pieces of wording shared by the reports: counts with the right plural, signed numbers
that never read "-0.00", skip reasons grouped by their shape, and lines kept to a width."""

from __future__ import annotations

import re
import textwrap

# The widest line the terminal's closing part prints (docs/reports.md: no line over 200).
LINE_WIDTH = 200

# An entry id inside a reason (simple_python_3, live_multiple_10-3-1, memory_kv_2-customer-0,
# with an optional ":suffix"), so that reasons naming one entry each group as one.
_ENTRY_ID = re.compile(r"\b[a-z]+(?:_[a-z]+)*_\d+(?:-[\w]+)*(?::\S+)?")


def count(n: int, singular: str, plural: str | None = None) -> str:
    """``1 entry``, ``2 entries``, ``1,200 entries``."""
    word = singular if n == 1 else (plural or f"{singular}s")
    return f"{n:,} {word}"


def signed(value: float, digits: int = 2) -> str:
    """``+1.25``, ``-0.50``, and ``+0.00`` for anything that rounds to zero (never ``-0.00``)."""
    rounded = round(value, digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{rounded:+.{digits}f}"


def reason_shape(reason: str) -> str:
    """A reason with the entry ids it names replaced, so that "no stored result for
    simple_python_3" and "... for simple_python_4" are one reason."""
    return _ENTRY_ID.sub("<id>", reason)


def top_reason(reasons: dict[str, int], limit: int = 160) -> str:
    """The commonest reason (reasons that differ only in the entry they name count as one),
    shortened, with how many entries it stands for and how many other reasons there were. A
    summary must not grow with the number of entries."""
    if not reasons:
        return ""
    shapes: dict[str, tuple[int, str]] = {}  # shape -> (entries, the first reason of it)
    for reason, n in reasons.items():
        seen, first = shapes.get(reason_shape(reason), (0, reason))
        shapes[reason_shape(reason)] = (seen + n, first)
    entries, example = max(shapes.values(), key=lambda item: item[0])
    if len(example) > limit:
        example = example[: limit - 3] + "..."
    text = example
    if entries > 1 and _ENTRY_ID.search(example):  # the same reason for other entries
        text += f", and {count(entries - 1, 'other entry', 'other entries')} alike"
    others = len(shapes) - 1
    return text + (f" (and {count(others, 'other reason')})" if others else "")


def fit(line: str, width: int = LINE_WIDTH) -> list[str]:
    """A line as one or more lines of at most ``width`` characters, the rest indented."""
    if len(line) <= width:
        return [line]
    if "\n" in line:  # an explanation of several lines: each kept apart
        return [part for piece in line.split("\n") for part in fit(piece, width)]
    return textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False)


def fit_all(lines: list[str], width: int = LINE_WIDTH) -> list[str]:
    return [part for line in lines for part in fit(line, width)]


def listed(items: list[str], room: int, at_most: int = 10) -> str:
    """As many of ``items`` as fit in ``room`` characters (and ``at_most``), then how many
    more: ``a, b, c and 7 more``."""
    shown: list[str] = []
    for i, item in enumerate(items[:at_most]):
        rest = len(items) - i - 1
        tail = f" and {rest} more" if rest else ""
        candidate = ", ".join([*shown, item])
        if shown and len(candidate) + len(tail) > room:
            break
        shown.append(item)
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
