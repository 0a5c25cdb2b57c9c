"""The baseline's answer and the current one side by side in the HTML report, their
differences marked by words and punctuation.

Bounded, as every computation on model output: each answer is cut to the length a baseline
keeps (``gate.ANSWER_LIMIT``), what both share at the start and the end is taken as it is, and
the rest is marked token by token only when it is short enough (:data:`MAX_TOKENS`; beyond,
it is marked as one removed and one added run). A page's marking shares one time budget
(:class:`DiffBudget`): past it, answers are shown side by side without marks. The plugin's
page and the compare tool's use the same bounds.
"""

from __future__ import annotations

import difflib
import re
import time

from pytest_bfcl.gate import cut_answer

_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")
# Tokens of each answer's differing middle marked one by one: the matcher's time grows faster
# than their product (400 on each side: about 0.04 s at worst on one core).
MAX_TOKENS = 400
# Seconds a page spends marking differences, all answers together.
DIFF_SECONDS = 5.0


class DiffBudget:
    """The time one page may spend marking differences; once spent, answers are shown
    without marks."""

    def __init__(self, seconds: float = DIFF_SECONDS) -> None:
        self.left = seconds

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def charge(self, seconds: float) -> None:
        self.left -= seconds


# The plugin's page is built once per process (the report's helper process, or the run's).
PAGE_BUDGET = DiffBudget()


def _shared_ends(left: list[str], right: list[str]) -> tuple[int, int]:
    """How many tokens the two share at the start, and then at the end."""
    start = 0
    limit = min(len(left), len(right))
    while start < limit and left[start] == right[start]:
        start += 1
    end = 0
    while end < limit - start and left[-1 - end] == right[-1 - end]:
        end += 1
    return start, end


def marked_difference(before: str, after: str) -> list[list[str]]:
    """The two answers as runs of ``["=", text]`` (in both), ``["-", text]`` (the baseline's
    only) and ``["+", text]`` (the current one's only): what the page marks."""
    left, right = _TOKENS.findall(before), _TOKENS.findall(after)
    start, end = _shared_ends(left, right)
    middle_left, middle_right = left[start : len(left) - end], right[start : len(right) - end]
    runs: list[list[str]] = []
    if start:
        runs.append(["=", "".join(left[:start])])
    if len(middle_left) <= MAX_TOKENS and len(middle_right) <= MAX_TOKENS:
        runs += _matched(middle_left, middle_right)
    else:  # too long to mark token by token in bounded time
        runs += [[op, "".join(tokens)] for op, tokens in (("-", middle_left), ("+", middle_right))
                 if tokens]  # fmt: skip
    if end:
        runs.append(["=", "".join(left[len(left) - end :])])
    return runs


def _matched(left: list[str], right: list[str]) -> list[list[str]]:
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


def answer_fields(
    baseline_answer: str | None, answer: str | None, budget: DiffBudget | None = None
) -> dict[str, object]:
    """A changed entry's record fields for its answers beside the baseline's, each cut to
    ``gate.ANSWER_LIMIT``; marked while ``budget`` (the process's page budget by default)
    lasts."""
    if baseline_answer is None and answer is None:
        return {}
    budget = budget if budget is not None else PAGE_BUDGET
    baseline_answer = cut_answer(baseline_answer) if baseline_answer is not None else None
    answer = cut_answer(answer) if answer is not None else None
    # an empty answer reads as such beside the other, never as a blank
    baseline_answer, answer = shown_answer(baseline_answer), shown_answer(answer)
    diff = None
    if baseline_answer is not None and answer is not None and not budget.spent:
        started = time.perf_counter()
        diff = marked_difference(baseline_answer, answer)
        budget.charge(time.perf_counter() - started)
    return {"baseline_answer": baseline_answer, "answer": answer, "answer_diff": diff}


EMPTY_ANSWER = "(empty answer: no text and no tool call)"


def shown_answer(text: str | None) -> str | None:
    """An answer as the reports show it: an empty one (nothing but white space) says so,
    where a blank would read as a report that lost it."""
    if text is None:
        return None
    return text if text.strip() else EMPTY_ANSWER
