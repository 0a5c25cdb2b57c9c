"""What the leaderboard's chat-completions handler puts on the wire besides the benchmark's
own texts: its sampling parameters, and how it echoes a model's answer into the history of a
conversation (``bfcl-eval`` 2026.3.23, ``OpenAICompletionsHandler`` and its subclasses).

Matching these makes a model see, step after step, what it sees on the leaderboard; any
difference (a sampling temperature, a reasoning trace left in or taken out of the history)
changes what it answers next and so its score.
"""

from __future__ import annotations

from typing import Any

from pytest_bfcl.scoring import REFERENCE_TEMPERATURE, HistoryEcho

__all__ = ["REFERENCE_TEMPERATURE", "HistoryEcho", "echoed_message", "history_echo_of"]

# Sent with every request: the leaderboard opts out of OpenAI storing its completions (the
# account's default may store them), in function-calling and prompting mode alike.
STORE = False

# -- the answer echoed into the history ---------------------------------------------------------
#
# ``as-returned``: the plain handler appends the SDK's message object, which the SDK sends back
# as the JSON the server returned (every field it held, nulls included: text beside tool calls,
# ``reasoning_content``, ``refusal``, ``annotations``, ``audio``, ``function_call``, an empty
# ``tool_calls``). ``no-reasoning``: the DeepSeek, Grok and Ling handlers rebuild the message
# without the reasoning when the server sent any (their ``_add_reasoning_content_if_available``
# methods); Ling only in prompting mode, as its function-calling parse is the plain one.

# The handler classes of the pinned release whose response parsing strips the reasoning from
# the echoed message (the class that parses a model's responses in its mode, as the registry
# resolves it); every other chat-completions handler echoes the message as returned.
NO_REASONING_PARSERS = frozenset({"DeepSeekAPIHandler", "GrokHandler", "LingAPIHandler"})


def history_echo_of(response_parser: str | None) -> HistoryEcho:
    """The echo convention of a leaderboard handler, by the class that parses its responses."""
    return "no-reasoning" if response_parser in NO_REASONING_PARSERS else "as-returned"


def echoed_message(message: dict[str, Any], mode: str, echo: HistoryEcho) -> dict[str, Any]:
    """The assistant message a handler of the convention appends to the history for an
    answer whose message the server returned as ``message``."""
    if echo == "as-returned" or ("reasoning_content" not in message and mode != "fc"):
        return message
    if mode != "fc":
        # Quirk: the text as Python's str() writes it, so an answer without text reads "None".
        return {"role": "assistant", "content": str(message.get("content"))}
    calls = message.get("tool_calls")
    if calls:  # kept as the SDK reads them: only the fields the handler copies
        return {
            "role": "assistant",
            "content": message.get("content"),
            "tool_calls": [_bare_call(call) for call in calls],
        }
    if "reasoning_content" in message:
        return {"role": "assistant", "content": message.get("content")}
    return message


def echo_of_record(
    record: dict[str, Any], mode: str, echo: HistoryEcho
) -> list[dict[str, Any]] | None:
    """The history echo of a chat-completion record; None for a record without the message
    as returned (a cut or refused answer, or one cached before messages were kept)."""
    message = record.get("message")
    return [echoed_message(message, mode, echo)] if isinstance(message, dict) else None


def _bare_call(call: Any) -> dict[str, Any]:
    call = call if isinstance(call, dict) else {}
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    return {
        "id": call.get("id"),
        "type": call.get("type"),
        "function": {"name": function.get("name"), "arguments": function.get("arguments")},
    }
