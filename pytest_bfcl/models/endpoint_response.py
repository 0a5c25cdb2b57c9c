"""What an endpoint's answer becomes: the stored record of a chat completion (read as plain
data; any field of an odd shape reads as absent or as text, never as calls), the record of an
answer cut at the size cap or refused as too long, and a ``/models`` listing."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.models.endpoint_errors import Failure, error_text, one_line
from pytest_bfcl.models.gateway_answers import gateway_failure
from pytest_bfcl.redact import redact_strings
from pytest_bfcl.scoring import CONTEXT_EXCEEDED, PROMPT_FILTERED, TRUNCATED

_MAX_TOKENS = 10**12  # a token count beyond this is not a count


def token_count(value: Any) -> int | None:
    """A usage count as the server reported it, or None when it is not a count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < _MAX_TOKENS else None
    if isinstance(value, float) and value.is_integer() and 0 <= value < _MAX_TOKENS:
        return int(value)
    return None


def text_of(value: Any) -> str | None:
    """A text field as text: JSON of anything that is not a string (never a call list)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=True)


def call_name(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=True)


def oversized_record(limit: int, latency: float, length: int | None) -> dict[str, Any]:
    """An answer over the size limit is the model's output, cut: a note in its place, and
    a finish reason that fails the entry (:mod:`pytest_bfcl.check.oversized`)."""
    size = f"{length} bytes" if length else "length unknown"
    return {
        "result": f"[the answer was cut: larger than {limit} bytes ({size}); not scored]",
        "tool_call_ids": [],
        "latency": round(latency, 4),
        "input_tokens": None,
        "output_tokens": None,
        "reasoning": None,
        "finish_reason": TRUNCATED,
        "response_truncated": {"limit": limit, "length": length},
    }


_REFUSALS = {
    "context": ("longer than the model's context window", CONTEXT_EXCEEDED),
    "filtered": ("the provider's content filter refused the prompt", PROMPT_FILTERED),
}


def context_record(message: str, latency: float, kind: str = "context") -> dict[str, Any]:
    """A request refused as longer than the model's context window, or by the provider's
    content filter: the model's failure, with the server's words in place of an answer
    (:mod:`pytest_bfcl.check.oversized`)."""
    why, finish_reason = _REFUSALS[kind]
    return {
        "result": f"[the request was refused: {why} ({one_line(message)}); not scored]",
        "tool_call_ids": [],
        "latency": round(latency, 4),
        "input_tokens": None,
        "output_tokens": None,
        "reasoning": None,
        "finish_reason": finish_reason,
    }


def json_object(body: bytes) -> dict[str, Any]:
    """A 2xx answer's body as a JSON object; anything else is a failed attempt."""
    try:
        response = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise Failure(
            "silent", f"the server answered with a body that is not JSON: {exc}"
        ) from None
    if not isinstance(response, dict):
        raise Failure(
            "silent", f"the server answered with JSON that is not an object: {body[:80]!r}"
        )
    return response


def completion_record(body: bytes, latency: float) -> dict[str, Any]:
    """The stored record of a chat completion (the response's JSON, read as plain data;
    any field of an odd shape reads as absent or as text, never as calls)."""
    response = json_object(body)
    choices = response.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    choice = first if isinstance(first, dict) else {}
    message = choice.get("message")
    if not isinstance(message, dict):
        raise Failure("silent", not_a_completion(response, choices))
    if (upstream := gateway_failure(response, choice)) is not None:
        raise Failure("silent", upstream)
    tool_calls = message.get("tool_calls")
    calls = [c for c in tool_calls if isinstance(c, dict)] if isinstance(tool_calls, list) else []
    result: Any
    if calls:
        functions: list[Any] = [c.get("function") for c in calls]
        functions = [f if isinstance(f, dict) else {} for f in functions]
        result = [{call_name(f.get("name")): f.get("arguments")} for f in functions]
    else:
        result = text_of(message.get("content")) or ""
    usage = response.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return {
        "result": result,
        "tool_call_ids": [text_of(c.get("id")) or "" for c in calls],
        "latency": round(latency, 4),
        "input_tokens": token_count(usage.get("prompt_tokens")),
        "output_tokens": token_count(usage.get("completion_tokens")),
        "reasoning": text_of(message.get("reasoning_content") or message.get("reasoning")),
        "finish_reason": text_of(choice.get("finish_reason")),
        # as returned: echoed into a conversation's history (pytest_bfcl.models.leaderboard_wire)
        "message": message,
    }


def answer_record(
    body: bytes, latency: float, cut: bool, length: int | None, limit: int
) -> dict[str, Any]:
    """The record of a 2xx answer read up to ``limit`` bytes (``cut``: there was more)."""
    return oversized_record(limit, latency, length) if cut else completion_record(body, latency)


def not_a_completion(response: dict[str, Any], choices: Any) -> str:
    """Why a 200 answer holds no model message (gateways such as OpenRouter and LiteLLM
    answer an upstream failure with a 200 and an error object): infrastructure, retried,
    never cached or scored."""
    error = response.get("error")
    if error:
        text = error_text(json.dumps({"error": error}, ensure_ascii=True).encode())
        return f"the server answered 200 with an error instead of a completion: {text}"
    if not isinstance(choices, list) or not choices:
        if choices is None:
            shown = "no choices"
        else:
            shown = "empty choices" if choices == [] else "choices that are not a list"
        return f"the server answered 200 with {shown} instead of a completion"
    return "the server answered 200 with a choice that holds no message"


def served_models(body: bytes) -> list[str]:
    """The model names of a ``/models`` listing; empty when it cannot be read."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return []
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return []
    return [str(m["id"]) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def generation_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A record's fields for a :class:`Generation` (the cut answer's sizes and the message as
    returned stay in the stored record; the note, finish reason and result say the same)."""
    return {k: v for k, v in record.items() if k not in ("response_truncated", "message")}


def masked_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record with every secret in what the server sent masked (a key or bearer token
    echoed in the answer, its reasoning or the message carried back): the one form the run
    scores, caches, echoes and writes, so no answer holds a key at rest."""
    return redact_strings(record)  # type: ignore[no-any-return]
