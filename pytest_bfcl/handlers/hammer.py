"""Hammer's handler (``HammerHandler``, function calling): a fixed system turn, then one user
turn holding the handler's task and format instructions with the functions in its own
compact form, then the conversation in ChatML; the question's system messages become user
messages; answers are a JSON list of ``{"name", "arguments"}`` (code fences ignored)."""

from __future__ import annotations

import copy
import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import Decoder, Family, calls_by_name, content_text, execute_form
from pytest_bfcl.handlers.texts import module_text

SYSTEM = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"


def _compact(doc: dict[str, Any]) -> dict[str, Any]:
    """One function in the handler's form: its parameters' schemas by name, nested objects
    flattened to their properties, ``required`` marked on each, defaults appended to the
    description. Quirk: as the handler, this changes the docs' own parameter schemas (the
    caller passes a copy it keeps between steps)."""
    parameters = doc["parameters"].get("properties", {})
    compact = {"name": doc["name"], "description": doc["description"], "parameters": parameters}
    for name in list(parameters):
        schema = parameters[name]
        if "properties" in schema and isinstance(schema["properties"], dict):
            required = schema.get("required", [])
            parameters[name] = schema["properties"]
            for inner in required:
                parameters[name][inner]["required"] = True
    for name in doc["parameters"].get("required", []):
        parameters[name]["required"] = True
    for name in parameters:
        if "default" in parameters[name]:
            default = parameters[name]["default"]
            parameters[name]["description"] += f"default is '{default}'"
    return compact


def compact_tools(functions: list[dict[str, Any]], renders_before: int) -> list[dict[str, Any]]:
    """The functions as the handler shows them at its ``renders_before + 1``-th prompt of a
    conversation: it rewrites the same docs at every prompt, so defaults pile up in the
    descriptions step after step."""
    docs = copy.deepcopy(functions)
    for _ in range(renders_before):
        for doc in docs:
            _compact(doc)
    return [_compact(doc) for doc in docs]


def _loaded(text: Any) -> Any:
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    try:
        value = json.loads(text.replace("```", ""))
    except (ValueError, RecursionError):
        return []  # the handler reads an answer that is not JSON as no calls
    check_value(value)
    return value


class HammerDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        value = _loaded(text)
        if not isinstance(value, list | dict | str):
            raise DecodeError(f"not a list of calls: {_short(value, 80)}")
        return calls_by_name(value)  # a dict iterates its keys, which fail as calls

    def decode_execute(self, text: Any) -> list[str]:
        value = _loaded(text)
        if isinstance(value, dict):
            calls = value.get("tool_calls", [])
        else:
            calls = value if isinstance(value, list) else []
        calls = calls if isinstance(calls, list) else [calls]
        out = []
        for call in calls:
            if not isinstance(call, dict):
                continue  # the handler skips what is not an object
            out.append(execute_form(call.get("name", ""), call.get("arguments", {}), ", "))
        return out


class HammerFamily(Family):
    handlers = ("HammerHandler",)
    name = "hammer"
    system_prompt = False
    decoder = HammerDecoder()

    def prepare_turn(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**m, "role": "user"} if m.get("role") == "system" else m for m in messages]

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        renders_before = sum(1 for m in messages if m.get("role") == "assistant")
        tools = compact_tools(functions, renders_before)
        task = module_text(self.root, "hammer", "TASK_INSTRUCTION")
        fmt = module_text(self.root, "hammer", "FORMAT_INSTRUCTION")
        content = (
            f"[BEGIN OF TASK INSTRUCTION]\n{task}\n[END OF TASK INSTRUCTION]\n\n"
            f"[BEGIN OF AVAILABLE TOOLS]\n{json.dumps(tools)}\n[END OF AVAILABLE TOOLS]\n\n"
            f"[BEGIN OF FORMAT INSTRUCTION]\n{fmt}\n[END OF FORMAT INSTRUCTION]\n\n"
        )
        turns = "".join(
            f"<|im_start|>{m.get('role')}\n{content_text(m)}<|im_end|>\n" for m in messages
        )
        return f"{SYSTEM}<|im_start|>user\n{content}<|im_end|>\n{turns}<|im_start|>assistant\n"
