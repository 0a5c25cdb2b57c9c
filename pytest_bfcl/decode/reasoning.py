"""Reasoning text in a model's answer, kept apart from the answer that is decoded.

Thinking models return their reasoning in one of two ways, and the leaderboard's handlers
treat them by family (``bfcl-eval`` 2026.3.23):

- **a field of its own** (``reasoning_content``, or ``reasoning`` in newer vLLM): the
  OpenAI-compatible handlers (OpenAI, DeepSeek, Grok, Qwen's API, vLLM and SGLang servers with
  a reasoning parser) decode the message's content as it is and record the field beside it.
  A ``<think>`` block left in the content is decoded with the rest (and so usually fails).
  This is ``field``, the default.
- **``<think>...</think>`` in the text**: the local handlers of Qwen3-style and DeepSeek-R1
  models cut the text at ``</think>`` before decoding; what follows the last ``</think>`` is
  the answer. This is ``think-tags`` (``--bfcl-reasoning=think-tags``, or chosen by
  ``--bfcl-leaderboard-model`` for those models).

Either way the reasoning is stored (``reasoning`` of a record, ``reasoning_content`` of a
result file) and shown in the reports, and never decoded as calls. The split happens where an
answer arrives from a server, as the leaderboard's handlers do it when they parse a response:
result files hold the answer without its reasoning, and ``replay:`` decodes them as stored.
"""

from __future__ import annotations

from typing import Any, get_args

from pytest_bfcl.scoring import Reasoning

REASONING_MODES: tuple[str, ...] = get_args(Reasoning)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

# The handler classes of the pinned release that cut ``<think>`` blocks out of a response
# before decoding it (their ``_parse_query_response_prompting``). Every other handler leaves
# the text as it is and reads reasoning, if at all, from a field of its own.
THINK_TAG_PARSERS = frozenset(
    {
        "QwenHandler",  # Qwen3 and QwQ, prompting
        "QwenFCHandler",  # Qwen3 function calling (a decoder of its own besides)
        "DeepseekReasoningHandler",  # DeepSeek-R1 distills
        "NanbeigeFCHandler",
        "PelicanVLFCHandler",
    }
)


def reasoning_mode_of(response_parser: str | None) -> Reasoning:
    """The mode that matches a leaderboard handler, by the class that parses its responses."""
    return "think-tags" if response_parser in THINK_TAG_PARSERS else "field"


def split_think(text: str) -> tuple[str, str]:
    """``(answer, reasoning)`` of a text that may hold ``<think>`` blocks.

    Quirk: as the reference, the text is cut at the *last* ``</think>``: everything before it
    is reasoning, whatever it holds (several blocks, text between them, calls written while
    thinking), and the answer is what follows, leading newlines removed. An opening tag is not
    needed (DeepSeek-R1's template opens the block in the prompt). A block that is never
    closed (the model ran out of tokens while thinking) leaves the text as it is, so it is
    decoded whole and fails there, as on the leaderboard.

    Deviation (no verdict changes): the reference records only the first block's text as the
    reasoning (DeepSeek-R1's handler even records the answer); here all of it is kept, with
    the outer tags and surrounding newlines removed. Linear in the text's length.
    """
    head, close, tail = text.rpartition(THINK_CLOSE)
    if not close:
        return text, ""
    reasoning = head.strip()
    if reasoning.startswith(THINK_OPEN):
        reasoning = reasoning[len(THINK_OPEN) :]
    return tail.lstrip("\n"), reasoning.strip("\n")


def _joined(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return "\n\n".join(kept) if kept else None


def apply_reasoning_mode(record: dict[str, Any], mode: str) -> dict[str, Any]:
    """A response record (``result``, ``reasoning``, ...) as the mode reads it: with
    ``think-tags``, a text answer's ``<think>`` blocks move to ``reasoning`` (after any
    reasoning the server sent in its own field). Tool calls and ``field`` are left alone.
    Returns a new record; the one given (the cached answer) is not changed."""
    result = record.get("result")
    if mode != "think-tags" or not isinstance(result, str) or THINK_CLOSE not in result:
        return record
    answer, thought = split_think(result)
    return {**record, "result": answer, "reasoning": _joined(record.get("reasoning"), thought)}


def joined_reasoning(value: Any) -> str | None:
    """A stored ``reasoning_content`` as one text: a string as it is; per-turn, per-step lists
    (multi-step entries) as their non-empty texts, one after another; anything else as absent."""
    if isinstance(value, str):
        return value or None
    if not isinstance(value, list):
        return None
    texts: list[str] = []
    done = object()
    stack: list[Any] = [iter(value)]
    while stack:  # iterative: a result file may nest lists deeper than recursion allows
        item = next(stack[-1], done)
        if item is done:
            stack.pop()
        elif isinstance(item, list):
            stack.append(iter(item))
        elif isinstance(item, str) and item:
            texts.append(item)
    return "\n".join(texts) or None
