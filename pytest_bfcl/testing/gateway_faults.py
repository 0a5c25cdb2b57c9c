"""Answers of broken gateways, rate limiters and providers for the fake chat server
(:mod:`pytest_bfcl.testing.fake_openai`), by fault name. Each writes one whole HTTP answer
through the request handler it is given.

- ``choice_error``: OpenRouter's shape of an upstream failure: HTTP 200, a choice with
  ``finish_reason: "error"``, an ``error`` object and an empty message;
- ``finish_error``: a choice whose ``finish_reason`` is ``"error"`` and nothing else says so;
- ``error_beside``: a top-level ``error`` object next to an ordinary-looking choice;
- ``content_filter``: the provider filtered the model's answer (200, ``finish_reason:
  "content_filter"``, no content);
- ``prompt_filter``: Azure's refusal of a prompt its content policy flags (400,
  ``code: "content_filter"``);
- ``rate_limit`` / ``rate_limit_60``: 429 with ``Retry-After: 0`` / ``60``;
- ``quota``: OpenAI's 429 ``insufficient_quota`` (the account has no credit);
- ``redirect``: 307 to another address, with a ``Location`` header;
- ``bad_gzip``: ``Content-Encoding: gzip`` on a body that is not gzip.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_bfcl.testing.loopback import send_json

UPSTREAM_ERROR = {"code": 502, "message": "Upstream provider error: connection reset"}
REDIRECT_TARGET = "http://127.0.0.1:9/v1/chat/completions"
QUOTA_MESSAGE = "You exceeded your current quota, please check your plan and billing details."
PROMPT_FILTER_MESSAGE = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content "
    "management policy."
)


def _completion(choice: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": "gen-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [choice],
        "usage": {"prompt_tokens": 100, "completion_tokens": 0, "total_tokens": 100},
        **extra,
    }


def _empty_message(finish_reason: str, **extra: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": ""}
    return {"index": 0, "message": message, "finish_reason": finish_reason, **extra}


def _rate_limit(retry_after: str) -> Callable[[Any], None]:
    def answer(handler: Any) -> None:
        error = {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}
        send_json(handler, 429, {"error": error}, {"retry-after": retry_after})

    return answer


GATEWAY_FAULTS: dict[str, Callable[[Any], None]] = {
    "choice_error": lambda h: send_json(
        h,
        200,
        _completion(_empty_message("error", error=UPSTREAM_ERROR, native_finish_reason="error")),
    ),
    "finish_error": lambda h: send_json(h, 200, _completion(_empty_message("error"))),
    "error_beside": lambda h: send_json(
        h, 200, _completion(_empty_message("stop"), error=UPSTREAM_ERROR)
    ),
    "content_filter": lambda h: send_json(h, 200, _completion(_empty_message("content_filter"))),
    "prompt_filter": lambda h: send_json(
        h,
        400,
        {
            "error": {
                "message": PROMPT_FILTER_MESSAGE,
                "type": None,
                "param": "prompt",
                "code": "content_filter",
                "status": 400,
                "innererror": {"code": "ResponsibleAIPolicyViolation"},
            }
        },
    ),
    "rate_limit": _rate_limit("0"),
    "rate_limit_60": _rate_limit("60"),
    "quota": lambda h: send_json(
        h,
        429,
        {
            "error": {
                "message": QUOTA_MESSAGE,
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        },
    ),
    "redirect": lambda h: send_json(h, 307, b"", {"location": REDIRECT_TARGET}),
    "bad_gzip": lambda h: send_json(
        h, 200, b"this is not gzip at all" * 10, {"content-encoding": "gzip"}
    ),
}
