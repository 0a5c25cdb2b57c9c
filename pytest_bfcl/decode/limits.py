"""Bounds on what a model's output may make the decoders, checkers and executor do.

A model's output is data of any size and shape. Everything built from it is bounded here so
that decoding, checking, rendering and executing it take bounded time and memory; an output
past a bound is the model's failure (a :class:`DecodeError` with the reason), never a hang, a
crash or an error of the run.

Each bound is far above anything a benchmark answer needs (the longest stored result in the
reference corpora is about 7,500 characters, the deepest argument a few levels). Deliberate
deviations from the reference, all on answers no benchmark entry can be passed with: an
answer past a bound fails where the reference would hang, run out of memory or crash on it;
in the relevance categories, where any call passes whatever its arguments, an answer past a
bound (more than ``MAX_CALLS`` calls, arguments nested deeper than ``MAX_DEPTH`` or longer
than ``MAX_TEXT_CHARS``) fails where the reference, given the time and memory, would pass it.
"""

from __future__ import annotations

import reprlib
from typing import Any

from pytest_bfcl.decode.errors import DecodeError

# Text handed to a parser (ast, json, XML, tree-sitter) per output or per step: over 25 times
# the longest answer in the corpora, and small enough that the worst text of this length
# (a flat list of 100,000 numbers, 28,000 calls) parses, reads and is refused in a couple of
# seconds and about 150 MB; at 1,000,000 characters the same takes 5 to 8 s and 600 MB.
MAX_TEXT_CHARS = 200_000
# Nesting of decoded values (lists in lists, dicts in dicts): Python's own parser stops at 200
# brackets; at 100 every renderer (repr, json) stays far from the interpreter's recursion limit.
MAX_DEPTH = 100
# Elements of a decoded value counted as a renderer sees them: every container, scalar and
# string character, shared references counted each time they appear. ``[[0]*10**5]*10**5`` is
# tiny in memory but 10**10 elements to repr or json.dumps.
MAX_EXPANDED = 1_000_000
# Integers: Python refuses to print ints of more than 4,300 digits (ValueError in repr, str and
# json); 14,000 bits (about 4,200 digits) keeps every decoded integer printable.
MAX_INT_BITS = 14_000
# Calls in one output or step: the benchmark's largest parallel answers hold a few dozen.
MAX_CALLS = 1_000


def check_text_length(text: str, what: str = "the output") -> None:
    if len(text) > MAX_TEXT_CHARS:
        raise DecodeError(
            f"{what} is {len(text):,} characters long; at most {MAX_TEXT_CHARS:,} are read"
        )


def check_int(value: int) -> None:
    if value.bit_length() > MAX_INT_BITS:
        raise DecodeError(
            f"an integer of {value.bit_length():,} bits is too large to read "
            f"(at most {MAX_INT_BITS:,} bits, about 4,200 digits)"
        )


class Budget:
    """The expanded size of values built from one output, spent as they are built, so that
    repetition (``[x] * n``) is refused before it allocates or before a renderer expands it."""

    def __init__(self, limit: int = MAX_EXPANDED) -> None:
        self.left = limit
        self.limit = limit

    def spend(self, amount: int) -> None:
        if amount > self.left:
            raise DecodeError(
                f"the value is too large: more than {self.limit:,} elements when expanded"
            )
        self.left -= amount


def expanded_size(value: Any, _memo: dict[int, int] | None = None, _depth: int = 0) -> int:
    """How many elements a renderer visits in ``value``: containers and scalars count one,
    strings and bytes one per character. Shared sub-values are measured once (memo by id) but
    counted at each occurrence, so measuring is cheap even when the expansion is huge."""
    if isinstance(value, str | bytes):
        return max(len(value), 1)
    if not isinstance(value, list | tuple | set | frozenset | dict):
        return 1
    if _depth > MAX_DEPTH:
        raise DecodeError(f"the value is nested more than {MAX_DEPTH} levels deep")
    memo = {} if _memo is None else _memo
    known = memo.get(id(value))
    if known is not None:
        return known
    items = (x for pair in value.items() for x in pair) if isinstance(value, dict) else iter(value)
    total = 1
    for item in items:
        total += expanded_size(item, memo, _depth + 1)
        if total > MAX_EXPANDED * 1_000:  # measured far enough to refuse it
            break
    memo[id(value)] = total
    return total


def check_value(value: Any) -> None:
    """Refuse a decoded value that is too deep, too large when expanded, or holds an integer
    too large to print. Raises :class:`DecodeError` with the reason."""
    _check_ints(value, 0, set())
    size = expanded_size(value)
    if size > MAX_EXPANDED:
        raise DecodeError(
            f"the value is too large: more than {MAX_EXPANDED:,} elements when expanded"
        )


# JSON text this short decodes within every bound of check_value (check_json_value).
_SHORT_JSON_CHARS = 2 * MAX_DEPTH


def check_json_value(value: Any, text: str) -> None:
    """:func:`check_value` for what ``json.loads`` read from ``text``. JSON has no shared
    values: every element it decodes takes at least a character of the text, every level of
    nesting two, every digit one. A text of at most :data:`_SHORT_JSON_CHARS` characters is
    therefore within every bound (100 levels, 200 elements, 200-digit integers) unwalked,
    which is most tool calls' arguments."""
    if len(text) > _SHORT_JSON_CHARS:
        check_value(value)


def _check_ints(value: Any, depth: int, seen: set[int]) -> None:
    if type(value) is int:
        check_int(value)
        return
    if not isinstance(value, list | tuple | set | frozenset | dict):
        return
    if depth > MAX_DEPTH:
        raise DecodeError(f"the value is nested more than {MAX_DEPTH} levels deep")
    if id(value) in seen:
        return
    seen.add(id(value))
    items = value.items() if isinstance(value, dict) else ((item, None) for item in value)
    for key, item in items:
        _check_ints(key, depth + 1, seen)
        _check_ints(item, depth + 1, seen)


def check_calls(calls: Any) -> None:
    """Bounds on a decoded call list ``[{name: {param: value}}]`` (or any decoded value)."""
    if isinstance(calls, list) and len(calls) > MAX_CALLS:
        raise DecodeError(f"{len(calls):,} calls in one output; at most {MAX_CALLS:,} are read")
    check_value(calls)


class _BoundedRepr(reprlib.Repr):
    """reprlib's bounded repr, also for integers too large for Python to print."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > MAX_INT_BITS:
            return f"<an integer of {x.bit_length():,} bits>"
        return super().repr_int(x, level)


_REPR = _BoundedRepr()
_REPR.maxlevel = 4
_REPR.maxstring = 200
_REPR.maxother = 200


def short_repr(value: Any, limit: int = 300) -> str:
    """A repr of any value in bounded time and length, for messages about hostile output."""
    try:
        text = _REPR.repr(value)
    except Exception:  # a value whose own repr fails
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Java and JavaScript values are read with the reference's regular expressions, some of which
# take quadratic or cubic time on crafted text (``put("a", put("a", ...`` is cubic: 10 s at
# 4,000 characters). Longer values are not converted: they stay source text, which no
# candidate equals (the longest ground-truth value is 160 characters, the longest stored Java or
# JavaScript answer in the corpora 407), so the verdict is the failure the reference would
# reach, without the wait.
MAX_CONVERTED_CHARS = 1_000


def clip(text: str, limit: int = 300) -> str:
    """At most ``limit`` characters of a message built from the model's output."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
