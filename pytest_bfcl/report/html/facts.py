"""One record per entry for the reports that let a person look into every entry (the HTML
report): what was asked, what the model said, what the checker made of it and why.

Every text field is bounded when the record is built (:func:`bounded`), so a run of any size
and a model answer of any size give a report of bounded size. Function docs are kept once per
distinct set (``functions_key`` points into the report's shared table), because multi-turn
entries repeat the same backends' docs hundreds of times.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from pytest_bfcl.report.html.answer_diff import answer_fields

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]

# Characters kept of one rendered field; a few kilobytes is what a person reads on a page.
FIELD_LIMIT = 4000
# Characters kept of a multi-step entry's whole conversation log.
CONVERSATION_LIMIT = 40_000


class EntryRecord(BaseModel):
    id: str
    category: str
    outcome: Outcome
    valid: bool | None = None  # the checker's verdict; None when the entry was not scored
    error_type: str | None = None
    reasons: list[str] = []  # the checker's reasons (or the error / skip message)
    baseline_valid: bool | None = None  # None: no baseline verdict
    regression: bool = False  # passed in the baseline, fails now
    improvement: bool = False  # failed in the baseline, passes now
    question: str = ""  # the user's messages, rendered (turns for multi-turn entries)
    functions_key: str | None = None  # key into the report's table of function docs
    output: str = ""  # the model's raw output as stored
    reasoning: str | None = None  # reasoning text the server returned separately
    decoded: str | None = None  # what the decoder made of the output
    expected: str | None = None  # the ground truth
    detail: list[str] = []  # the checker's readable lines (failing turn, state difference)
    # Multi-step entries: per turn, the steps with the model's output, decoded calls and the
    # results of executing them (bounded as a whole).
    conversation: list[dict[str, Any]] | None = None
    latency: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    # Repeated samples: how many passed, of how many (None with one sample).
    passes: int | None = None
    samples: int | None = None
    # The entry's ground truth is known to be wrong upstream (the reference, then the fix).
    known_error: str | None = None
    # An entry whose verdict changed from the baseline's: the baseline's answer and this run's
    # as text, and their differences marked (report/html/answer_diff.py).
    baseline_answer: str | None = None
    answer: str | None = None
    answer_diff: list[list[str]] | None = None


def bounded(value: Any, limit: int = FIELD_LIMIT) -> str:
    """``value`` as compact text of at most ``limit`` characters, built without ever
    rendering more than that: a model's answer may hold structures that expand to gigabytes
    when rendered whole (shared references repeated), or nesting deeper than recursion."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 3] + "..."
    if _plain(value, limit):
        # The same text as the pieces below, rendered by the json module's C encoder: the
        # pieces of an ordinary value cost more than scoring it.
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= limit else text[: limit - 3] + "..."
    return _bounded_pieces(value, limit)


# Nesting that the json module's encoder renders without nearing the recursion limit.
_PLAIN_DEPTH = 100


def _plain(value: Any, limit: int) -> bool:
    """Whether ``json.dumps`` renders ``value`` exactly as :func:`_pieces` does, at a cost
    bounded by ``limit``: made only of lists, tuples, dicts with string keys, strings and keys
    of at most ``FIELD_LIMIT`` characters, booleans, None, integers ``_scalar`` writes out,
    finite floats, at most ``_PLAIN_DEPTH`` deep, and at least ``limit`` characters once
    rendered only if it is cut there anyway (each element counts for the least it takes)."""
    budget = limit
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is str:
            if len(item) > FIELD_LIMIT:
                return False
            budget -= len(item) + 2
        elif kind is list or kind is tuple:
            if depth >= _PLAIN_DEPTH:
                return False
            budget -= 2 + len(item)
            if budget < 0:
                return False
            stack.extend((inner, depth + 1) for inner in item)
        elif kind is dict:
            if depth >= _PLAIN_DEPTH:
                return False
            budget -= 2 + len(item)
            if budget < 0:
                return False
            for key, inner in item.items():
                if type(key) is not str or len(key) > FIELD_LIMIT:
                    return False
                budget -= len(key) + 4
                stack.append((inner, depth + 1))
        elif item is None or kind is bool:
            budget -= 4
        elif kind is int:
            if item.bit_length() > 4000:
                return False
            budget -= 1
        elif kind is float:
            if item != item or item in (float("inf"), float("-inf")):
                return False
            budget -= 3
        else:
            return False
        if budget < 0:
            return False  # large: the pieces stop at the limit
    return True


def _bounded_pieces(value: Any, limit: int) -> str:
    out: list[str] = []
    size = 0
    for piece in _pieces(value):
        out.append(piece)
        size += len(piece)
        if size > limit:
            return "".join(out)[: limit - 3] + "..."
    return "".join(out)


def _pieces(value: Any) -> Iterator[str]:
    """JSON-like text of ``value`` in pieces, depth-first with an explicit stack of lazy
    iterators, so that the work done is proportional to the text produced."""
    stack: list[Iterator[Any]] = [iter([value])]
    while stack:
        try:
            item = next(stack[-1])
        except StopIteration:
            stack.pop()
            continue
        if isinstance(item, _Text):
            yield item
        elif isinstance(item, dict):
            stack.append(_dict_parts(item))
        elif isinstance(item, list | tuple):
            stack.append(_list_parts(item))
        else:
            yield _scalar(item)


class _Text(str):
    """Text already rendered (as opposed to a string value, which is quoted)."""


def _list_parts(items: list[Any] | tuple[Any, ...]) -> Iterator[Any]:
    yield _Text("[")
    for index, inner in enumerate(items):
        if index:
            yield _Text(", ")
        yield inner
    yield _Text("]")


def _dict_parts(mapping: dict[Any, Any]) -> Iterator[Any]:
    yield _Text("{")
    for index, (key, inner) in enumerate(mapping.items()):
        yield _Text((", " if index else "") + _scalar(key) + ": ")
        yield inner
    yield _Text("}")


def _scalar(value: Any) -> str:
    if isinstance(value, str) and not isinstance(value, _Text):
        short = value if len(value) <= FIELD_LIMIT else value[:FIELD_LIMIT]
        return json.dumps(short, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int) and value.bit_length() > 4000:  # str() of it is slow or refused
        return f"<integer of {value.bit_length()} bits>"
    text = repr(value)
    return text if len(text) <= FIELD_LIMIT else text[:FIELD_LIMIT] + "..."


def compact_json(value: Any) -> str:
    """JSON as the report files embed it: no spaces, characters as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def functions_json(functions: Sequence[Any]) -> str:
    """A set of function docs as the HTML report embeds them (compact JSON, keys in the
    data's order)."""
    return compact_json(list(functions))


def functions_key(functions: Sequence[Any]) -> str:
    """A short key of a set of function docs: the same docs (in the same key order, as
    copies of one data file's docs have them) give the same key, in every process."""
    return functions_key_of_json(functions_json(functions))


def functions_key_of_json(text: str) -> str:
    """:func:`functions_key` of docs already rendered by :func:`functions_json`."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def render_question(turns: list[list[Any]]) -> str:
    """The user's messages, a turn per paragraph (``role: content``)."""
    lines = []
    for number, turn in enumerate(turns):  # from 0, as the checker's lines count turns
        if len(turns) > 1:
            lines.append(f"-- turn {number} --")
        for message in turn:
            role = getattr(message, "role", None) or (
                message.get("role") if isinstance(message, dict) else ""
            )
            content = getattr(message, "content", None)
            if content is None and isinstance(message, dict):
                content = message.get("content")
            lines.append(f"{role}: {content if isinstance(content, str) else bounded(content)}")
    return bounded("\n".join(lines))


def bounded_conversation(log: Any) -> list[dict[str, Any]] | None:
    """A conversation log (per turn: the query and the steps) cut to a total size: each text
    inside is bounded, and turns past the budget are dropped with a note."""
    if not isinstance(log, list):
        return None
    out: list[dict[str, Any]] = []
    used = 0
    for turn in log:
        text = bounded(turn, CONVERSATION_LIMIT)
        used += len(text)
        if used > CONVERSATION_LIMIT:
            out.append({"note": f"{len(log) - len(out)} more turns not shown (size limit)"})
            break
        out.append(_bounded_turn(turn))
    return out


def _bounded_turn(turn: Any) -> dict[str, Any]:
    if not isinstance(turn, dict):
        return {"note": bounded(turn)}
    result: dict[str, Any] = {}
    for key, value in turn.items():
        if isinstance(value, list):
            result[str(key)] = [_bounded_message(m) for m in value[:200]]
        else:
            result[str(key)] = bounded(value)
    return result


def _bounded_message(message: Any) -> Any:
    if not isinstance(message, dict):
        return bounded(message)
    return {
        str(k): (v if isinstance(v, bool | int | float) or v is None else bounded(v))
        for k, v in message.items()
    }


def build_record(**fields: Any) -> EntryRecord:
    """A record from what the run has for one entry (the arguments of :func:`record_fields`),
    validated."""
    return EntryRecord(**record_fields(**fields))


def record_fields(*, functions_key_: str | None = None, **facts: Any) -> dict[str, Any]:
    """An :class:`EntryRecord`'s fields, in its order, as plain data: what a run builds for
    each entry, from the arguments of :func:`record_facts` (the verdict and generation are
    validated models already, so the values have the record's types)."""
    return fields_from_facts(record_facts(**facts), functions_key_)


# What a record is made from, in the order of :func:`record_facts`' tuple.
FACTS = (
    "id",
    "category",
    "outcome",
    "valid",
    "error_type",
    "errors",
    "message",
    "known_error",
    "baseline_valid",
    "question",
    "generated",
    "result",
    "reasoning",
    "decoded",
    "expected",
    "report",
    "inference_log",
    "latency",
    "input_tokens",
    "output_tokens",
    "passes",
    "samples",
    "answers",
)


def record_facts(
    *,
    entry: Any,
    outcome: Outcome,
    verdict: Any = None,
    generation: Any = None,
    baseline_valid: bool | None = None,
    message: str | None = None,
    known_error: str | None = None,
    answers: tuple[str | None, str | None] | None = None,
) -> tuple[Any, ...]:
    """What an entry's record is made from, unrendered (the model's output, the decoded and
    expected calls as the run has them), as a tuple in :data:`FACTS` order: cheap to take
    while the entry finishes, rendered later (:func:`fields_from_facts`), possibly in another
    process. Only the question is rendered here (the data's message objects stay here).
    ``answers``: (the baseline's, this run's) for an entry whose verdict changed."""
    details = generation.details if generation is not None and generation.details else {}
    return (
        entry.id,
        entry.category,
        outcome,
        verdict.valid if verdict is not None else None,
        verdict.error_type if verdict is not None else None,
        verdict.errors[:8] if verdict is not None else [],
        message,
        known_error,
        baseline_valid,
        render_question(entry.question),
        generation is not None,
        generation.result if generation is not None else None,
        generation.reasoning if generation is not None else None,
        verdict.decoded if verdict is not None else None,
        verdict.expected if verdict is not None else None,
        (verdict.report or [])[:60] if verdict is not None else None,
        details.get("inference_log"),
        generation.latency if generation is not None else None,
        generation.input_tokens if generation is not None else None,
        generation.output_tokens if generation is not None else None,
        verdict.passes if verdict is not None else None,
        verdict.samples if verdict is not None else None,
        answers,
    )


def fields_from_facts(facts: tuple[Any, ...], functions_key_: str | None) -> dict[str, Any]:
    """A record's fields (see :func:`record_fields`) from its facts: every text bounded."""
    (entry_id, category, outcome, valid, error_type, errors, message, known_error,
     baseline_valid, question, generated, result, reasoning, decoded, expected, report,
     inference_log, latency, input_tokens, output_tokens, passes, samples,
     answers) = facts  # fmt: skip
    reasons = [bounded(e, 1000) for e in errors]
    if message:
        reasons.append(bounded(message, 1000))
    if known_error:
        reasons.insert(0, bounded(known_error, 1000))
    return {
        "id": entry_id,
        "category": category,
        "outcome": outcome,
        "valid": valid,
        "error_type": error_type,
        "reasons": reasons,
        "baseline_valid": baseline_valid,
        "regression": baseline_valid is True and valid is False,
        "improvement": baseline_valid is False and valid is True,
        "question": question,
        "functions_key": functions_key_,
        "output": bounded(result) if generated else "",
        "reasoning": bounded(reasoning) if reasoning else None,
        "decoded": bounded(decoded) if decoded is not None else None,
        "expected": bounded(expected) if expected is not None else None,
        "detail": [bounded(line, 1000) for line in report] if report is not None else [],
        "conversation": bounded_conversation(inference_log),
        "latency": latency,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "passes": passes,
        "samples": samples,
        "known_error": known_error,
        **_answer_fields(answers),
    }


def _answer_fields(answers: tuple[str | None, str | None] | None) -> dict[str, Any]:
    fields = answer_fields(*answers) if answers else {}
    return {name: fields.get(name) for name in ("baseline_answer", "answer", "answer_diff")}
