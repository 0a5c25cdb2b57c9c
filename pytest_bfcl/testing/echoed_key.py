"""A careless server's answer for the test server (:mod:`.fake_openai`'s ``echo_key`` fault):
the request's key, as its Authorization header carried it, quoted in what the model answers."""

from __future__ import annotations

import json
from typing import Any


def echo_key(message: dict[str, Any], headers: Any, extra: str) -> None:
    """A careless server's answer: the Authorization header it was sent, and the key in it,
    quoted in the answer's text or calls' arguments and in its reasoning."""
    header = str(headers.get("Authorization"))
    quoted = f"Authorization: {header}; key {header.removeprefix('Bearer ')}; {extra}"
    message["reasoning_content"] = f"the request said {quoted}"
    calls = message.get("tool_calls") or []
    for call in calls:
        function = call["function"]
        try:
            arguments = json.loads(function["arguments"])
        except ValueError:
            arguments = {}
        if isinstance(arguments, dict):
            arguments["note"] = quoted
        function["arguments"] = json.dumps(arguments)
    if not calls:
        message["content"] = f"{message.get('content') or ''} ({quoted})"
