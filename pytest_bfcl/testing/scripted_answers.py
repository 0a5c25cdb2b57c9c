"""Answers chosen from the request alone, for comparing what two harnesses send: the same
request always gets the same answer, in chat-completions or Responses form, so two harnesses
that send the same requests hold the same conversations, and the first request that differs
shows where they part.

A conversation (its first user message) is given a behaviour and an answer shape, both picked
by hashing that message among the ones asked for:

- behaviours: ``text`` (a text answer, no call), ``right`` (one call of an offered function
  with a value of the declared type for every required parameter, then text), ``wrong`` (one
  call with every value of the wrong type and a required parameter left out, then text),
  ``always`` (a call at every step, up to the harness's step limit);
- shapes: ``plain`` (the fields a minimal server returns), ``vllm`` (every field vLLM and the
  OpenAI SDK return, null or empty: ``refusal``, ``annotations``, ``audio``, ``function_call``,
  ``tool_calls: []``), ``reasoning`` (reasoning text, or a Responses reasoning item with a
  summary and encrypted content), ``mixed`` (text beside the calls).

In prompting mode (no tools in the request) calls are written as Python text naming a
function found in the system prompt.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pytest_bfcl.testing.completions_answers import conversation_prefix

Behaviour = Literal["text", "right", "wrong", "always"]
Shape = Literal["plain", "vllm", "reasoning", "mixed"]
BEHAVIOURS: tuple[Behaviour, ...] = ("text", "right", "wrong", "always")
SHAPES: tuple[Shape, ...] = ("plain", "vllm", "reasoning", "mixed")
TEXT_ANSWER = "I have finished; nothing else to do."
MIXED_TEXT = "Sure, doing that now."
REASONING_TEXT = "The user wants this done; one call does it."
_TOOL_RESULTS_PREFIX = "[{'role': 'tool'"  # prompting mode feeds results back as user text
_PROMPT_NAME = re.compile(r"""["']name["']\s*:\s*["']([^"']+)["']""")
_RIGHT_VALUES = {
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "string": "example",
}
_WRONG_VALUES = {"integer": "one", "number": "1.5", "boolean": "yes", "string": 7}


def _digest(*parts: str) -> int:
    return int(hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:12], 16)


def _text(content: Any) -> str:
    """A message's content as text (Responses content may be a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def history(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's messages (chat) or input items (Responses)."""
    items = body.get("messages", body.get("input"))
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return [m for m in items if isinstance(m, dict)] if isinstance(items, list) else []


def is_tool_result(item: dict[str, Any]) -> bool:
    if item.get("role") == "tool" or item.get("type") == "function_call_output":
        return True
    return item.get("role") == "user" and _text(item.get("content")).startswith(
        _TOOL_RESULTS_PREFIX
    )


def conversation_key(body: dict[str, Any]) -> str:
    """The conversation a request belongs to: its first user message (a completions prompt:
    the text before the assistant's first turn)."""
    if isinstance(body.get("prompt"), str):
        return conversation_prefix(body["prompt"])
    for item in history(body):
        if item.get("role") == "user" and not is_tool_result(item):
            return _text(item.get("content"))
    return ""


def position(body: dict[str, Any]) -> tuple[int, int]:
    """(turn, step): user messages so far, and tool results since the last of them."""
    turn, step = -1, 0
    for item in history(body):
        if is_tool_result(item):
            step += 1
        elif item.get("role") == "user":
            turn, step = turn + 1, 0
    return turn, step


def offered_tools(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, parameters schema) of each tool, chat or Responses; in prompting mode the names
    the system prompt lists (no schema)."""
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        found = []
        for tool in tools:
            function = tool.get("function", tool) if isinstance(tool, dict) else {}
            parameters = function.get("parameters")
            found.append((str(function.get("name", "")), parameters if parameters else {}))
        return found
    for item in history(body):
        if item.get("role") in ("system", "developer"):
            names = _PROMPT_NAME.findall(_text(item.get("content")))
            if names:
                return [(name, {}) for name in dict.fromkeys(names)]
    return []


def call_arguments(schema: dict[str, Any], wrong: bool) -> dict[str, Any]:
    """A value for each required parameter: of its type (the first enum value when it has
    one), or of another type with the last required parameter left out."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [p for p in schema.get("required", []) if isinstance(p, str)]
    if wrong:
        required = required[:-1]
    arguments: dict[str, Any] = {}
    for name in required:
        spec = properties.get(name, {}) if isinstance(properties, dict) else {}
        kind = spec.get("type", "string") if isinstance(spec, dict) else "string"
        if wrong:
            arguments[name] = _WRONG_VALUES.get(kind, 7)
        elif isinstance(spec, dict) and isinstance(spec.get("enum"), list) and spec["enum"]:
            arguments[name] = spec["enum"][0]
        else:
            arguments[name] = _RIGHT_VALUES.get(kind, "example")
    return arguments


class Script:
    """Which behaviours and shapes conversations are given."""

    def __init__(
        self, behaviours: tuple[Behaviour, ...] = BEHAVIOURS, shapes: tuple[Shape, ...] = SHAPES
    ) -> None:
        self.behaviours = behaviours
        self.shapes = shapes

    def choice(self, body: dict[str, Any]) -> tuple[Behaviour, Shape]:
        key = conversation_key(body)
        return (
            self.behaviours[_digest("behaviour", key) % len(self.behaviours)],
            self.shapes[_digest("shape", key) % len(self.shapes)],
        )

    def calls(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The calls this request is answered with (none: a text answer)."""
        behaviour, _ = self.choice(body)
        _, step = position(body)
        tools = offered_tools(body)
        if behaviour == "text" or not tools or (behaviour != "always" and step > 0):
            return []
        key = conversation_key(body)
        name, schema = tools[_digest("tool", key, str(position(body))) % len(tools)]
        return [(name, call_arguments(schema, wrong=behaviour == "wrong"))]

    def ids(self, body: dict[str, Any], kind: str, count: int) -> list[str]:
        """Ids that the same request always gets, different at every step."""
        seed = _digest(kind, conversation_key(body), str(position(body)))
        return [f"{kind}_{seed:x}{index}" for index in range(count)]

    # -- chat completions -------------------------------------------------------------------

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        _, shape = self.choice(body)
        calls = self.calls(body)
        prompting = not body.get("tools")
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if shape == "vllm":
            message.update(refusal=None, annotations=None, audio=None, function_call=None)
        if calls and prompting:
            message["content"] = _python_calls(calls)
        elif calls:
            ids = self.ids(body, "call", len(calls))
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for call_id, (name, args) in zip(ids, calls, strict=True)
            ]
            if shape == "mixed":
                message["content"] = MIXED_TEXT
        else:
            message["content"] = TEXT_ANSWER
            if shape == "vllm":
                message["tool_calls"] = []
        if shape in ("reasoning", "vllm"):
            message["reasoning_content"] = REASONING_TEXT if shape == "reasoning" else None
        return {
            "id": self.ids(body, "chatcmpl", 1)[0],
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    # -- the Responses API ------------------------------------------------------------------

    def response(self, body: dict[str, Any]) -> dict[str, Any]:
        _, shape = self.choice(body)
        calls = self.calls(body)
        prompting = not body.get("tools")
        output: list[dict[str, Any]] = []
        if shape == "reasoning":
            output.append(
                {
                    "id": self.ids(body, "rs", 1)[0],
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": REASONING_TEXT}],
                    "encrypted_content": f"enc-{self.ids(body, 'enc', 1)[0]}",
                }
            )
        if calls and not prompting:
            if shape == "mixed":
                output.append(self._message_item(body, MIXED_TEXT, shape))
            ids = self.ids(body, "call", len(calls))
            item_ids = self.ids(body, "fc", len(calls))
            for call_id, item_id, (name, args) in zip(ids, item_ids, calls, strict=True):
                output.append(
                    {
                        "id": item_id,
                        "type": "function_call",
                        "status": "completed",
                        "arguments": json.dumps(args),
                        "call_id": call_id,
                        "name": name,
                    }
                )
        else:
            text = _python_calls(calls) if calls else TEXT_ANSWER
            output.append(self._message_item(body, text, shape))
        return {
            "id": self.ids(body, "resp", 1)[0],
            "object": "response",
            "status": "completed",
            "model": body.get("model"),
            "output": output,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        }

    def _message_item(self, body: dict[str, Any], text: str, shape: Shape) -> dict[str, Any]:
        part: dict[str, Any] = {"type": "output_text", "text": text, "annotations": []}
        if shape == "vllm":
            part["logprobs"] = []
        return {
            "id": self.ids(body, "msg", 1)[0],
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }


def _python_calls(calls: list[tuple[str, dict[str, Any]]]) -> str:
    written = [
        f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls
    ]
    return f"[{', '.join(written)}]"
