"""Linear-time stand-ins for the reference's list-cutting regular expressions.

The reference cuts lists of items out of model text with patterns of one shape::

    OPEN \\s* I .*? J \\s* (?: , \\s* I .*? J \\s* )* CLOSE

(``I``/``J`` an item's opening and closing character: ``{``/``}`` for the JSON return format,
``[``/``]`` for JavaScript 2-D arrays). The lazy ``.*?`` items make a backtracking engine try
every way of splitting the text into items: ``[{}, {}, ... x`` takes minutes at 40 items and a
100-character JavaScript array takes seconds. :func:`lazy_list_end` returns the end of the very
match the regex finds (property-tested against it), in linear time, quirks included: an item
ends at the first ``J`` that lets the rest of the pattern match, even inside a nested list.

Why one right-to-left pass reproduces the regex: after an item's closing ``J`` and its trailing
whitespace the next character decides everything: ``CLOSE`` ends the match, ``,`` must be
followed by whitespace, ``I`` and a later ``J`` that can itself finish, anything else fails
(whitespace is never ``,``, ``I`` or ``CLOSE``, so ``\\s*`` never gives any back). Whether a
``J`` can finish, and where the regex's first finishing path then ends, depends only on the text
after it; an item's lazy ``.*?`` takes the first finishing ``J`` after its ``I``, which is what
the regex's backtracking finds first. Without DOTALL, ``.`` stops at a newline, so that ``J``
must also come before the next newline.
"""

from __future__ import annotations

from dataclasses import dataclass


def skip_space(text: str, index: int) -> int:
    """Past the whitespace at ``index``. ``\\s`` in a str pattern is ``str.isspace()`` (both are
    ``Py_UNICODE_ISSPACE``)."""
    while index < len(text) and text[index].isspace():
        index += 1
    return index


@dataclass(frozen=True)
class ItemList:
    """One pattern of the shape above."""

    item_open: str
    item_close: str
    close: str
    dotall: bool

    def table(self, text: str) -> _Table:
        return _Table(self, text)


class _Table:
    """For every position: the first item-closing character at or after it that can finish
    the pattern, and where the match then ends."""

    def __init__(self, pattern: ItemList, text: str) -> None:
        self.pattern = pattern
        self.text = text
        size = len(text)
        self.finish: dict[int, int] = {}
        self.first_finishing = [-1] * (size + 1)
        self.next_newline = [size] * (size + 1)
        for index in range(size - 1, -1, -1):
            char = text[index]
            self.first_finishing[index] = self.first_finishing[index + 1]
            self.next_newline[index] = index if char == "\n" else self.next_newline[index + 1]
            if char != pattern.item_close:
                continue
            end = self._end_after_item(index)
            if end is not None:
                self.finish[index] = end
                self.first_finishing[index] = index

    def items_end(self, item_open: int) -> int | None:
        """The end of the match when the first item opens at ``item_open``, or ``None``."""
        text = self.text
        if item_open >= len(text) or text[item_open] != self.pattern.item_open:
            return None
        closing = self.first_finishing[item_open + 1]
        if closing < 0:
            return None
        if not self.pattern.dotall and self.next_newline[item_open + 1] < closing:
            return None  # ``.`` cannot cross the newline before any finishing ``J``
        return self.finish[closing]

    def _end_after_item(self, closing: int) -> int | None:
        text = self.text
        after = skip_space(text, closing + 1)
        if after >= len(text):
            return None
        if text[after] == self.pattern.close:
            return after + 1
        if text[after] != ",":
            return None
        return self.items_end(skip_space(text, after + 1))


def lazy_list_end(pattern: ItemList, text: str, items_from: int) -> int | None:
    """The end of the pattern's match when its first item opens at ``items_from`` (after
    ``OPEN`` and its whitespace), or ``None``."""
    return pattern.table(text).items_end(items_from)
