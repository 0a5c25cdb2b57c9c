"""Pelican-VL's handler (``PelicanVLFCHandler``, function calling): Qwen's function-calling
reading (``<tool_call>`` blocks, reasoning cut out) with its own ChatML prompt: the tools
block in the system turn (after the question's system message), a default system turn where
there are neither functions nor a system message, every result in its own ``tool`` turn
wrapped in ``<tool_response>``, calls written back without newlines between them and no
reasoning shown again. A system message after the first is written without its text, as the
handler does."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.handlers.base import content_text
from pytest_bfcl.handlers.qwen import QwenFCFamily
from pytest_bfcl.handlers.texts import text_starting

_PROMPT = ("pelican_vl_fc", "PelicanVLFCHandler", "_format_prompt")
# the parts of the tools block, by how each begins, in the handler's order
_TOOLS_OPENING = ("# Tools", "\n\nYou are provided", "\n<tools>")
_TOOLS_CLOSING = ("\n</tools>", "\n\nFor each function call", "\n<tool_call>")
_DEFAULT_SYSTEM = "<|im_start|>system\nYou are"


def _calls(message: dict[str, Any]) -> str:
    out = []
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments, ensure_ascii=False)
        out.append(
            f'<tool_call>\n{{"name": "{function.get("name")}", "arguments": {arguments}}}'
            "\n</tool_call>"
        )
    return "".join(out)


def _user_content(content: Any) -> str:
    """A user message's text; of a list of parts, the text parts (the benchmark has no
    images or videos, whose placeholders are left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part["text"]) for part in content if isinstance(part, dict) and "text" in part
        )
    return ""


class PelicanVLFCFamily(QwenFCFamily):
    handlers = ("PelicanVLFCHandler",)
    name = "pelican-vl-fc"

    def _text(self, start: str) -> str:
        return text_starting(self.root, _PROMPT, start)

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        system = bool(messages) and messages[0].get("role") == "system"
        out = []
        if functions:
            out.append("<|im_start|>system\n")
            if system:
                out.append(content_text(messages[0]) + "\n\n")
            out.extend(self._text(start) for start in _TOOLS_OPENING)
            out.extend(f"\n{json.dumps(doc)}" for doc in functions)
            out.extend(self._text(start) for start in _TOOLS_CLOSING)
            out.append("<|im_end|>\n")
        elif system:
            out.append(f"<|im_start|>system\n{content_text(messages[0])}<|im_end|>\n")
        else:
            out.append(self._text(_DEFAULT_SYSTEM))
        for index, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            if index == 0 and system:
                continue  # written in the system turn above
            out.append(f"<|im_start|>{role}\n")
            if role == "tool":
                out.append(f"<tool_response>\n{content}\n</tool_response>")
            elif role == "assistant":
                out.append(_calls(message))
                if content:
                    out.append(str(content))
            elif role == "user":
                out.append(_user_content(content))
            out.append("<|im_end|>\n")
        out.append("<|im_start|>assistant\n")
        return "".join(out)
