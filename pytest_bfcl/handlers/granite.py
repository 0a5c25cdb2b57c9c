"""Granite 3's handler (``Granite3FCHandler``, function calling): ``<|start_of_role|>``
markup, the question's system message or Granite's own with its dates (and its tool
instructions when there are tools), the functions as indented JSON in a ``tools`` turn, no
opening of the assistant's turn. It stores the calls it read after ``<|tool_call|>`` (or
``<tool_call>``) when they are all ``{"name", "arguments"}``, else the text."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode.limits import check_text_length
from pytest_bfcl.handlers.arch import ArchDecoder
from pytest_bfcl.handlers.base import Family, RawAnswer, content_text, stored_calls_or_text
from pytest_bfcl.handlers.llama import python_literal
from pytest_bfcl.handlers.texts import text_starting

_PROMPT = ("granite_3", "Granite3FCHandler", "_format_prompt")
# Quirk: the handler strips any of these characters from the start (str.lstrip's set).
_STRIPPED = "ASSISTANT:"


def extracted_calls(text: str) -> list[Any]:
    """What the handler reads after the first tool-call tag: a JSON list (a lone object is
    made one), its string items read as Python literals; anything else kept as it is."""
    check_text_length(text)
    text = text.lstrip(_STRIPPED).lstrip()
    if "<tool_call>" in text:
        text, tag = text.replace("</tool_call>", ""), "<tool_call>"
    else:
        tag = "<|tool_call|>"
    start = text.find(tag)
    if start == -1:
        return []
    body = text[start + len(tag) :].strip()  # the greedy pattern: everything after the tag
    if not body.startswith("[") and not body.endswith("]"):
        body = f"[{body}]"
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return [body]
    if not isinstance(value, list):
        return [value]
    return [python_literal(item) if isinstance(item, str) else item for item in value]


class Granite3Family(Family):
    handlers = ("Granite3FCHandler",)
    name = "granite-3"
    system_prompt = False
    decoder = ArchDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        if messages[0].get("role") == "system":
            system, messages = content_text(messages[0]), messages[1:]
        else:
            system = text_starting(self.root, _PROMPT, "Knowledge Cutoff Date")
            if functions:
                system += text_starting(self.root, _PROMPT, " You are a helpful AI assistant")
        out = [f"<|start_of_role|>system<|end_of_role|>{system}<|end_of_text|>\n"]
        if functions:
            tools = json.dumps(functions, indent=4)
            out.append(f"<|start_of_role|>tools<|end_of_role|>{tools}<|end_of_text|>\n")
        for message in messages:
            role, text = message.get("role"), content_text(message)
            out.append(f"<|start_of_role|>{role}<|end_of_role|>{text}<|end_of_text|>\n")
        return "".join(out)

    def read(self, raw: str) -> RawAnswer:
        return stored_calls_or_text(raw, extracted_calls(raw))
