"""What a Responses API answer becomes: the stored record, read as the leaderboard's handler
reads it (the ``function_call`` items as calls, else the text of the ``output_text`` parts;
each reasoning summary followed by a newline), plus the answer's output items, which the
history carries back exactly as returned (``echo``). Read as plain data: an item or field of an
odd shape reads as absent or as text, never as calls."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.models.endpoint_errors import Failure, error_text, one_line
from pytest_bfcl.models.endpoint_response import call_name, json_object, text_of, token_count


def output_text(items: list[dict[str, Any]]) -> str:
    """The text of every ``output_text`` part of the ``message`` items, joined (what the
    OpenAI SDK's ``Response.output_text`` gives)."""
    texts: list[str] = []
    for item in items:
        content = item.get("content") if item.get("type") == "message" else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "output_text":
                text = part.get("text")
                texts.append(text if isinstance(text, str) else text_of(text) or "")
    return "".join(texts)


def reasoning_summary(items: list[dict[str, Any]]) -> str | None:
    """Each summary text of the ``reasoning`` items followed by a newline; None for none."""
    texts: list[str] = []
    for item in items:
        summary = item.get("summary") if item.get("type") == "reasoning" else None
        for part in summary if isinstance(summary, list) else []:
            text = part.get("text") if isinstance(part, dict) else None
            if text is not None:
                texts.append(f"{text if isinstance(text, str) else text_of(text)}\n")
    return "".join(texts) or None


def finish_reason(response: dict[str, Any]) -> str | None:
    """``completed``, or why the answer is incomplete (``max_output_tokens``...)."""
    details = response.get("incomplete_details")
    if isinstance(details, dict) and details.get("reason") is not None:
        return text_of(details.get("reason"))
    return text_of(response.get("status"))


# Why an answer may be incomplete and still be the model's: it ran out of output tokens, or
# the provider's content filter cut it (scored as it is, like a chat completion's
# ``finish_reason: "content_filter"``). Any other reason is the provider's.
MODEL_INCOMPLETE_REASONS = frozenset({"max_output_tokens", "content_filter"})


def provider_failure(response: dict[str, Any]) -> str | None:
    """Why a 200 answer that holds an output is still no answer of the model's: an ``error``
    object, ``status: "failed"`` (or cancelled, or not finished), or ``incomplete`` for a
    reason of the provider's. ``None`` when it is the model's answer, whatever its content;
    calls beside such a failure are no answer either."""
    error = response.get("error")
    if error:
        text = error_text(json.dumps({"error": error}, ensure_ascii=True).encode())
        return f"the server answered 200 with an error beside the response: {text}"
    status = response.get("status")
    if status is None or status == "completed":
        return None
    if status == "incomplete":
        reason = finish_reason(response)
        if reason in MODEL_INCOMPLETE_REASONS:
            return None
        return (
            f"the server answered 200 with an incomplete response ({one_line(str(reason))}), "
            "not the model's answer"
        )
    return f"the server answered 200 with a response whose status is {one_line(str(status))}"


def responses_record(body: bytes, latency: float) -> dict[str, Any]:
    """The stored record of a Responses answer, with ``echo``: its output items."""
    response = json_object(body)
    output = response.get("output")
    if not isinstance(output, list):
        raise Failure("silent", not_a_response(response))
    if (failure := provider_failure(response)) is not None:
        raise Failure("silent", failure)
    items = [item for item in output if isinstance(item, dict)]
    calls = [item for item in items if item.get("type") == "function_call"]
    result: Any
    if calls:
        result = [{call_name(call.get("name")): call.get("arguments")} for call in calls]
    else:
        result = output_text(items)
    usage = response.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return {
        "result": result,
        "tool_call_ids": [text_of(call.get("call_id")) or "" for call in calls],
        "latency": round(latency, 4),
        "input_tokens": token_count(usage.get("input_tokens")),
        "output_tokens": token_count(usage.get("output_tokens")),
        "reasoning": reasoning_summary(items),
        "finish_reason": finish_reason(response),
        "echo": items,
    }


def not_a_response(response: dict[str, Any]) -> str:
    """Why a 200 answer holds no output (a failed response, a gateway's error object, another
    API's answer): infrastructure, retried, never cached or scored."""
    error = response.get("error")
    if error:
        text = error_text(json.dumps({"error": error}, ensure_ascii=True).encode())
        return f"the server answered 200 with an error instead of a response: {text}"
    if "choices" in response:
        return (
            "the server answered with a chat completion, not a Responses answer (does it "
            "serve /responses? --bfcl-wire-format=chat-completions speaks chat completions)"
        )
    shown = "no output" if response.get("output") is None else "an output that is not a list"
    return f"the server answered 200 with {shown} instead of a response"
