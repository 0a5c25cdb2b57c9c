"""Answers of a model flooding its conversation, for the fake chat server
(:mod:`pytest_bfcl.testing.fake_openai`): each step calling the web search tool a thousand
times (``search_flood``)."""

from __future__ import annotations

import json
from typing import Any


def search_flood(body: dict[str, Any], count: int) -> dict[str, Any]:
    """A completion calling the web search tool ``count`` times (a model flooding the web)."""
    tools = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    name = next((n for n in tools if "search_engine_query" in n), "search_engine_query")
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps({"keywords": f"flood {i}"})},
        }
        for i in range(count)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {
        "id": "chatcmpl-flood",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }
