"""The baseline's answer and the current one side by side in the HTML report, their
differences marked by words and punctuation."""

from __future__ import annotations

import difflib
import re

_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")
# Tokens of each answer compared (an answer is at most a few thousand characters): the
# matcher's time grows with their product.
_MAX_TOKENS = 3000


def marked_difference(before: str, after: str) -> list[list[str]]:
    """The two answers as runs of ``["=", text]`` (in both), ``["-", text]`` (the baseline's
    only) and ``["+", text]`` (the current one's only): what the page marks."""
    left, right = _TOKENS.findall(before)[:_MAX_TOKENS], _TOKENS.findall(after)[:_MAX_TOKENS]
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    runs: list[list[str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            runs.append(["=", "".join(left[i1:i2])])
            continue
        if i2 > i1:
            runs.append(["-", "".join(left[i1:i2])])
        if j2 > j1:
            runs.append(["+", "".join(right[j1:j2])])
    return runs


def answer_fields(baseline_answer: str | None, answer: str | None) -> dict[str, object]:
    """A changed entry's record fields for its answers beside the baseline's."""
    if baseline_answer is None and answer is None:
        return {}
    # an empty answer reads as such beside the other, never as a blank
    baseline_answer, answer = shown_answer(baseline_answer), shown_answer(answer)
    diff = None
    if baseline_answer is not None and answer is not None:
        diff = marked_difference(baseline_answer, answer)
    return {"baseline_answer": baseline_answer, "answer": answer, "answer_diff": diff}


EMPTY_ANSWER = "(empty answer: no text and no tool call)"


def shown_answer(text: str | None) -> str | None:
    """An answer as the reports show it: an empty one (nothing but white space) says so,
    where a blank would read as a report that lost it."""
    if text is None:
        return None
    return text if text.strip() else EMPTY_ANSWER
