"""An entry's answer beside the baseline's: the text both are kept as, the lines a failure's
text and ``--bfcl-explain`` add, and the JSON report's list of changed entries (the HTML
report's side-by-side view is :mod:`.html.answer_diff`).

The answer is what the model said, as stored (tool calls or text), rendered bounded: the same
for every kind of category, so a baseline recorded from one run reads the same in another.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bfcl.gate import ANSWER_LIMIT, BaselineAnswers, cut_answer
from pytest_bfcl.redact import redact_text
from pytest_bfcl.report.html.answer_diff import shown_answer
from pytest_bfcl.report.html.facts import bounded

# Characters of an answer on one line of a failure's text (the whole answer is in the HTML
# report and the JSON report).
LINE_LIMIT = 600


# Why a server stops an answer at its output-token limit: a chat completion's finish reason,
# and a Responses API answer's incomplete reason.
TOKEN_LIMIT_REASONS = frozenset({"length", "max_output_tokens"})
# How an answer cut at the token limit starts, as kept: before the text, so that no bound on
# the text's length (here, on a failure's line, in a page) can drop it.
CUT_MARK = "[cut at the token limit"


def answer_text(verdict: Any, generation: Any = None) -> str:
    """What the model answered for a verdict, as the baseline keeps it: its output as stored,
    bounded, lone surrogates escaped; an answer the server stopped at the output-token limit
    (``generation``'s finish reason) starts with a mark that says so and its length. Secrets
    are masked where it is written (:func:`redacted_answers` for a baseline, the failure text
    and the JSON report)."""
    output = verdict.model_output
    text = "" if output is None else bounded(output, ANSWER_LIMIT)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    cut = token_limit_mark(generation)
    if cut is None:
        return text
    return f"{cut}] {text}" if text.strip() else f"{cut}; nothing before it]"


def token_limit_mark(generation: Any) -> str | None:
    """``[cut at the token limit after 512 output tokens`` (unclosed) for a generation the
    server stopped at its output-token limit; None for any other."""
    if getattr(generation, "finish_reason", None) not in TOKEN_LIMIT_REASONS:
        return None
    tokens = getattr(generation, "output_tokens", None)
    after = f" after {tokens:,} output tokens" if isinstance(tokens, int) else ""
    return CUT_MARK + after


def redacted_answers(answers: dict[str, str]) -> dict[str, str]:
    """Every answer with its secrets masked, as a baseline keeps them (a file often
    committed). About 150 microseconds an answer, once, when the baseline is saved."""
    return {entry_id: redact_text(text) for entry_id, text in answers.items()}


def flipped(baseline_valid: bool | None, valid: bool | None) -> bool:
    """Whether an entry's verdict differs from the baseline's (a regression or an improvement)."""
    return baseline_valid is not None and valid is not None and baseline_valid != valid


def baseline_lines(
    entry_id: str, answers: BaselineAnswers, current: str | None, turn: int | None = None
) -> list[str]:
    """The lines a changed entry's text adds: the baseline's answer (or why none is shown)
    beside the current one; for a conversation that failed at ``turn``, that turn's answers
    (the whole answers where one was cut too short to read the turn from)."""
    before = answers.get(entry_id)
    if before is None:
        lines = [f"  baseline: (none: {answers.missing(entry_id)})"]
        return lines + ([f"  now:      {_one_line(current)}"] if current is not None else [])
    turns = _turns(before, turn), _turns(current, turn)
    if turn is not None and None not in turns:
        return [f"  baseline, turn {turn}: {_one_line(turns[0] or '')}",
                f"  now, turn {turn}:      {_one_line(turns[1] or '')}"]  # fmt: skip
    lines = [f"  baseline: {_one_line(before)}"]
    return lines + ([f"  now:      {_one_line(current)}"] if current is not None else [])


def _turns(text: str | None, turn: int | None) -> str | None:
    """A conversation's answer at ``turn``, as JSON text; None when it cannot be read."""
    if text is None or turn is None or not text.startswith("["):
        return None
    try:
        turns = json.loads(text)
    except (ValueError, RecursionError):
        return None  # cut at the size bound, or nested past the stack
    if not isinstance(turns, list) or turn >= len(turns):
        return None
    return json.dumps(turns[turn], ensure_ascii=False)


_TURN = re.compile(r"^\s*turn (\d+):")


def failing_turn(verdict: Any) -> int | None:
    """The turn a conversation's verdict says failed (its detail lines name it)."""
    for line in verdict.report or []:
        found = _TURN.match(str(line))
        if found:
            return int(found.group(1))
    return None


# Control characters and bidirectional overrides: printed raw, a model's answer could recolour,
# rewrite or reorder the terminal's or CI log's lines around it.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _one_line(text: str) -> str:
    text = shown_answer(text) or ""
    flat = _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", " ".join(text.split()))
    return cut_answer(flat, LINE_LIMIT)


def change_record(
    entry_id: str, category: str, answers: BaselineAnswers, current: str | None
) -> dict[str, Any]:
    """One changed entry as the JSON report lists it."""
    before = answers.get(entry_id)
    return {
        "id": entry_id,
        "category": category,
        "baseline_answer": before,
        "answer": redact_text(current) if current is not None else None,
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
