"""An entry's answer beside the baseline's: the text both are kept as, the lines a failure's
text and ``--bfcl-explain`` add, and the JSON report's list of changed entries (the HTML
report's side-by-side view is :mod:`.html.answer_diff`).

The answer is what the model said, as stored (tool calls or text), rendered bounded: the same
for every kind of category, so a baseline recorded from one run reads the same in another.
"""

from __future__ import annotations

from typing import Any

from pytest_bfcl.gate import ANSWER_LIMIT, BaselineAnswers, cut_answer
from pytest_bfcl.redact import redact_text
from pytest_bfcl.report.html.facts import bounded

# Characters of an answer on one line of a failure's text (the whole answer is in the HTML
# report and the JSON report).
LINE_LIMIT = 600


def answer_text(verdict: Any) -> str:
    """What the model answered for a verdict, as the baseline keeps it: its output as stored,
    bounded, secrets masked, lone surrogates escaped."""
    text = redact_text(bounded(verdict.model_output, ANSWER_LIMIT))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def flipped(baseline_valid: bool | None, valid: bool | None) -> bool:
    """Whether an entry's verdict differs from the baseline's (a regression or an improvement)."""
    return baseline_valid is not None and valid is not None and baseline_valid != valid


def baseline_lines(entry_id: str, answers: BaselineAnswers, current: str | None) -> list[str]:
    """The lines a changed entry's text adds: the baseline's answer (or why none is shown)
    beside the current one."""
    before = answers.get(entry_id)
    shown = _one_line(before) if before is not None else f"(none: {answers.missing(entry_id)})"
    lines = [f"  baseline: {shown}"]
    if current is not None:
        lines.append(f"  now:      {_one_line(current)}")
    return lines


def _one_line(text: str) -> str:
    return cut_answer(" ".join(text.split()), LINE_LIMIT)


def change_record(
    entry_id: str, category: str, answers: BaselineAnswers, current: str | None
) -> dict[str, Any]:
    """One changed entry as the JSON report lists it."""
    before = answers.get(entry_id)
    return {
        "id": entry_id,
        "category": category,
        "baseline_answer": before,
        "answer": current,
        "no_baseline_answer": None if before is not None else answers.missing(entry_id),
    }


def changes_report(
    gate: Any, answers: BaselineAnswers, current: dict[str, str]
) -> dict[str, Any] | None:
    """The JSON report's ``changes``: the entries the gate found worse (regressions, and
    flaky ones worse now) and better, each with the baseline's answer and this run's; with a
    note when the baseline holds no answers. None without a baseline comparison."""
    if gate is None or not gate.comparisons:
        return None
    worse: list[tuple[str, str]] = []
    better: list[tuple[str, str]] = []
    for comparison in gate.comparisons:
        if comparison.kind != "category":
            continue
        worse += [(i, comparison.name) for i in (*comparison.regressions, *comparison.flaky_before)]
        better += [(i, comparison.name) for i in comparison.improvements]
    answers.all()  # read now, so the note below is known
    return {
        "baseline_answers": answers.count(),
        "note": answers.why_none,
        "regressions": [change_record(i, c, answers, current.get(i)) for i, c in worse],
        "improvements": [change_record(i, c, answers, current.get(i)) for i, c in better],
    }
