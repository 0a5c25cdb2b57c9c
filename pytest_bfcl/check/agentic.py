"""Checking an agentic entry (memory and web-search questions): the model's final message must
mention one of the expected answers.

The final message is the last step of the (single) turn that is not a call: a step that does not
decode, or decodes to nothing. Answer and message are both normalised (a few punctuation marks
dropped, lower case, single quotes as double quotes; whitespace kept) and an answer matches when
it occurs between word boundaries, anywhere in the message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pytest_bfcl.check.multi_turn import decode_step, is_empty_calls
from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.models import AgenticAnswer, Entry
from pytest_bfcl.decode.limits import short_repr

_DROPPED = re.compile(r"[,./\-_*^()]")


def normalize_answer(text: str) -> str:
    return _DROPPED.sub("", text).lower().replace("'", '"')


def answer_found(message: Any, expected: list[str]) -> bool:
    return matching_answer(message, expected) is not None


def matching_answer(message: Any, expected: list[str]) -> str | None:
    """The first expected answer the message mentions, or ``None``."""
    text = normalize_answer(_as_text(message))
    for answer in expected:
        if re.search(rf"\b{re.escape(normalize_answer(answer))}\b", text):
            return answer
    return None


def _as_text(message: Any) -> str:
    if type(message) is list:
        message = message[0]
    if type(message) is str:
        return message
    try:
        return str(message)
    except Exception:  # a value Python cannot print (an integer of more than 4,300 digits)
        return short_repr(message)


def final_message(steps: Sequence[Any], mode: str, handler: str | None = None) -> Any:
    """The last step that is not a call list (``None`` when every step is one).

    The reference decodes every step and keeps the last message; walking back from the end
    finds the same step after decoding only the steps behind it (a turn stored as a 50 MB
    string is 50 million one-character steps)."""
    for step in reversed(steps):
        try:
            calls = decode_step(step, mode, handler)
        except Exception:  # whatever fails to decode is a message, as in the benchmark
            return step
        if is_empty_calls(calls):
            return step
    return None


def evaluate_agentic(
    entry: Entry,
    answer: AgenticAnswer | None,
    result: Any,
    mode: str,
    handler: str | None = None,
) -> Verdict:
    expected = list(answer.ground_truth) if answer is not None else []

    def verdict(valid: bool, error_type: str | None = None, **fields: Any) -> Verdict:
        return Verdict(
            id=entry.id,
            category=entry.category,
            valid=valid,
            error_type=error_type,
            model_output=result,
            expected=expected,
            **fields,
        )

    if type(result) is not list or len(result) != 1:
        return verdict(
            False,
            "agentic:inference_error",
            errors=[
                "Error during inference phase. Model did not output a list of model responses."
            ],
        )
    # The benchmark walks the turn as it is stored: a list of steps (or, oddly, the characters
    # of a string, the keys of a dict).
    turn = result[0]
    # A string is walked in place rather than copied into a list of characters.
    steps: Sequence[Any] = (
        turn if isinstance(turn, list | str) else list(turn) if isinstance(turn, dict) else [turn]
    )
    message = final_message(steps, mode, handler)
    if not message:  # an empty final text counts as no message at all, as in the benchmark
        return verdict(
            False,
            "agentic:no_last_message",
            errors=["Cannot find the last chat message that is not a function call."],
            report=[f"all {len(steps)} steps were tool calls; the model never answered"],
        )
    if matching_answer(message, expected) is not None:
        return verdict(True, decoded=message)
    text = _as_text(message)
    return verdict(
        False,
        "agentic:answer_not_found",
        errors=["None of the expected answers were found in the model response."],
        decoded=message,
        report=[
            f"final message: {text[:500]}",
            f"expected any of: {expected}",
            f"normalised message: {normalize_answer(text)[:500]}",
            f"normalised answers: {[normalize_answer(a) for a in expected]}",
        ],
    )
