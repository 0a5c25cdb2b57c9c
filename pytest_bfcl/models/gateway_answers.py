"""Whose failure a gateway's or provider's answer is: the model's (scored, F) or the
infrastructure's (retried, never cached or scored). The table of shapes is in
``docs/run-integrity.md``.

Gateways (OpenRouter, LiteLLM, cloud proxies) often answer an upstream failure with HTTP 200:
an ``error`` object beside or inside the choice, ``finish_reason: "error"``, an empty message.
None of those is the model speaking; the leaderboard, which calls the provider's own API,
never sees them. A provider's content filter is another matter: the model as served refused
or was cut, the leaderboard scores what came back, and so does this plugin.
"""

from __future__ import annotations

import json
from typing import Any

# The finish reason a gateway gives a choice that failed upstream (OpenRouter, LiteLLM).
ERROR_FINISH = "error"
# The codes a provider gives a prompt its content policy refuses (Azure OpenAI: HTTP 400,
# ``code: "content_filter"``, inner code ``ResponsibleAIPolicyViolation``).
PROMPT_FILTER_CODES = frozenset({"content_filter", "ResponsibleAIPolicyViolation"})
# OpenAI's code for an account without credit: no retry lifts it.
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


def _error_message(error: Any, limit: int = 200) -> str:
    """An error object's message on one line (its JSON when it has no message)."""
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) or not message:
        message = json.dumps(error, ensure_ascii=True, default=str)
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def gateway_failure(response: dict[str, Any], choice: dict[str, Any]) -> str | None:
    """Why a 200 answer that holds a message is still no answer of the model's (an error
    object beside or inside the choice, or ``finish_reason: "error"``); ``None`` when it is
    the model's answer, whatever its content."""
    if response.get("error"):
        return "the server answered 200 with an error beside the completion: " + _error_message(
            response["error"]
        )
    if choice.get("error"):
        return "the server answered 200 with an error inside the choice: " + _error_message(
            choice["error"]
        )
    if choice.get("finish_reason") == ERROR_FINISH:
        return (
            'the server answered 200 with finish_reason "error" (an upstream failure, '
            "not the model's answer)"
        )
    return None


def error_codes(body: bytes) -> set[str]:
    """The ``code`` and ``type`` strings of an error answer (and of its ``innererror``)."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return set()
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return set()
    inner = error.get("innererror")
    fields = [error.get("code"), error.get("type")]
    if isinstance(inner, dict):
        fields.append(inner.get("code"))
    return {field for field in fields if isinstance(field, str)}


def is_prompt_filter(status: int, body: bytes) -> bool:
    """A provider refused the prompt by its content policy: the model as served gives no
    answer, which the leaderboard scores as a failure."""
    return status == 400 and bool(error_codes(body) & PROMPT_FILTER_CODES)


def is_quota_exhausted(status: int, body: bytes) -> bool:
    """A 429 that says the account has no credit left: waiting does not lift it."""
    return status == 429 and bool(error_codes(body) & QUOTA_CODES)
