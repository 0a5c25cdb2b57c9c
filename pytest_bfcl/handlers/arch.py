"""Arch's handler (``ArchHandler``, function calling): Qwen-style ChatML with the tools in a
``# Tools`` block after the system message (Arch's own when the question has none), calls
written back as ``<tool_call>`` blocks and results as ``<tool_response>`` blocks. It stores
the calls it read from an answer's ``<tool_call>`` blocks (``[{name: arguments}]``), else
the text, and decodes only such stored calls."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import Decoder, Family, RawAnswer, content_text, execute_form
from pytest_bfcl.handlers.llama import python_literal
from pytest_bfcl.handlers.qwen import tool_call_bodies, tool_result
from pytest_bfcl.handlers.texts import text_starting

_PROMPT = ("arch", "ArchHandler", "_format_prompt")


def _calls(result: Any) -> list[dict[str, Any]]:
    if not isinstance(result, list) or any(not isinstance(item, dict) for item in result):
        raise DecodeError(f"Model did not return a list of function calls: {_short(result, 200)}")
    check_value(result)
    return result


class ArchDecoder(Decoder):
    structured = True

    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        return _calls(text)

    def decode_execute(self, text: Any) -> list[str]:
        out = []
        for call in _calls(text):
            for name, arguments in call.items():
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments)
                    except (ValueError, RecursionError) as exc:
                        raise DecodeError(f"arguments that are not JSON: {exc}") from None
                out.append(execute_form(name, arguments))
        return out


def extracted_calls(text: str) -> list[Any]:
    """Every ``<tool_call>`` block: its JSON, or its text where it is not JSON."""
    check_text_length(text)
    out: list[Any] = []
    for body in tool_call_bodies(text):
        try:
            out.append(json.loads(body))
        except (ValueError, RecursionError):
            out.append(body)
    return out


def _as_call(item: Any) -> dict[str, Any]:
    """A block as the handler reads it into a call: a block that is not JSON is read as a
    Python literal (the handler evaluates it; here it is only parsed)."""
    if isinstance(item, str):
        item = python_literal(item)
    if not isinstance(item, dict) or "name" not in item or "arguments" not in item:
        raise DecodeError(f"a tool call without a name or arguments: {_short(item, 120)}")
    try:
        return {item["name"]: item["arguments"]}
    except TypeError as exc:
        raise DecodeError(f"a call's name cannot be read: {exc}") from None


class ArchFamily(Family):
    handlers = ("ArchHandler",)
    name = "arch"
    system_prompt = False
    decoder = ArchDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        system = text_starting(self.root, _PROMPT, "You are a helpful assistant designed")
        if messages[0].get("role") == "system":
            system = content_text(messages[0])
        if functions:
            out = ["<|im_start|>system\n", system, text_starting(self.root, _PROMPT, "\n\n# Tools")]
            out.extend(f"\n{json.dumps(doc)}" for doc in functions)
            out.append(text_starting(self.root, _PROMPT, "\n</tools>"))
        else:
            out = [f"<|im_start|>system\n{system}<|im_end|>\n"]
        for index, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            calls = message.get("tool_calls") or []
            if (
                role == "user"
                or (role == "system" and index != 0)
                or (role == "assistant" and not calls)
            ):
                out.append(f"<|im_start|>{role}\n{content}<|im_end|>\n")
            elif role == "assistant":
                out.append(f"<|im_start|>{role}")
                if content:
                    out.append(f"\n{content}")
                for call in calls:
                    call = call.get("function", call) if isinstance(call, dict) else {}
                    arguments = json.dumps(call.get("arguments", {}))
                    out.append(
                        f'\n<tool_call>\n{{"name": "{call.get("name", "")}", '
                        f'"arguments": {arguments}}}\n</tool_call>'
                    )
                out.append("<|im_end|>\n")
            elif role == "tool":
                out.append(tool_result(messages, index, content))
        out.append("<|im_start|>assistant\n")
        return "".join(out)

    def read(self, raw: str) -> RawAnswer:
        calls = extracted_calls(raw)
        if not calls:
            return RawAnswer(raw, "", {"role": "assistant", "content": raw})
        stored = [_as_call(item) for item in calls]
        return RawAnswer(stored, "", {"role": "assistant", "content": None, "tool_calls": calls})
