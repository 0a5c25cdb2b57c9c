"""The Responses API spoken by the chat-completions test server
(:mod:`pytest_bfcl.testing.fake_openai`): a Responses request read as the chat request it
stands for, and a chat completion written as the Response that says the same, so one server
answers both wire formats with the same oracle answers."""

from __future__ import annotations

import json
from typing import Any


def _text(content: Any) -> str:
    """A message's content as text (Responses content may be a list of parts)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _chat_message(item: dict[str, Any]) -> dict[str, Any] | None:
    """One input item as a chat message (``None`` for a call, joined by :func:`chat_body`,
    and for reasoning, which a chat history has no place for)."""
    kind = item.get("type")
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item.get("call_id", ""), "content": item["output"]}
    if kind in ("function_call", "reasoning"):
        return None
    role = "system" if item.get("role") == "developer" else item.get("role")
    content = item.get("content")
    return {"role": role, "content": content if role != "assistant" else _text(content)}


def chat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions request a Responses request stands for: its input items as
    messages (consecutive calls as one assistant message), its flat tools nested again."""
    items = body.get("input")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else items or []
    messages: list[dict[str, Any]] = []
    for item in items:
        if item.get("type") == "function_call":
            call = {
                "id": item.get("call_id", ""),
                "type": "function",
                "function": {"name": item.get("name", ""), "arguments": item.get("arguments", "")},
            }
            last = messages[-1] if messages else {}
            if last.get("role") == "assistant" and last.get("tool_calls"):
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            continue
        message = _chat_message(item)
        if message is not None:
            messages.append(message)
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    tools = body.get("tools") or []
    if tools:
        chat["tools"] = [
            {"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
            for t in tools
        ]
    return chat


def response_of(completion: dict[str, Any]) -> dict[str, Any]:
    """A chat completion as the Response that says the same: its calls as ``function_call``
    items, its text as a message item, its usage in the Responses names."""
    choices = completion.get("choices") or []
    message = (choices[0].get("message") if choices else None) or {}
    output: list[dict[str, Any]] = []
    for i, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        output.append(
            {
                "id": f"fc_{i}",
                "type": "function_call",
                "status": "completed",
                "call_id": call.get("id") or f"call_{i}",
                "name": function["name"],
                "arguments": function["arguments"],
            }
        )
    if message.get("content") or not output:
        text = message.get("content")
        text = text if isinstance(text, str) else json.dumps(text)
        part = {"type": "output_text", "text": text, "annotations": []}
        output.append(
            {
                "id": "msg_0",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    usage = completion.get("usage") or {}
    return {
        "id": "resp-test",
        "object": "response",
        "status": "completed",
        "model": completion.get("model"),
        "output": output,
        "usage": {
            "input_tokens": usage.get("prompt_tokens", 0),
            "output_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0),
        },
    }
