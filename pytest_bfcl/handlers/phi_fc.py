"""Phi's function-calling handler (``PhiFCHandler``, Phi-4-mini): ``<|role|>...<|end|>``
markup, the system turn (the question's system message or the handler's own) carrying the
functions as JSON lines between ``<|tool|>`` and ``<|/tool|>``. It stores the calls it read
from ``<|tool_call|>`` blocks (``[{name: arguments}]``) when they are all
``{"name", "arguments"}``, else the text, and decodes only such stored calls."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode.limits import check_text_length
from pytest_bfcl.handlers.arch import ArchDecoder
from pytest_bfcl.handlers.base import Family, RawAnswer, content_text, stored_calls_or_text
from pytest_bfcl.handlers.llama import python_literal
from pytest_bfcl.handlers.texts import text_starting

_PROMPT = ("phi_fc", "PhiFCHandler", "_format_prompt")
OPEN, CLOSE = "<|tool_call|>", "<|/tool_call|>"


def _bodies(text: str) -> list[str]:
    """Each closed ``<|tool_call|>`` block's text; with none, the text after the first
    opening tag (one final newline left out), as the handler's fallback pattern reads it."""
    bodies: list[str] = []
    start = text.find(OPEN)
    while start != -1:
        end = text.find(CLOSE, start + len(OPEN))
        if end == -1:
            break
        bodies.append(text[start + len(OPEN) : end])
        start = text.find(OPEN, end + len(CLOSE))
    if bodies or OPEN not in text:
        return bodies
    rest = text[text.find(OPEN) + len(OPEN) :]
    return [rest[:-1] if rest.endswith("\n") else rest]


def phi_calls(text: str) -> list[Any]:
    """What the handler reads from an answer's ``<|tool_call|>`` blocks: each block's JSON
    list (a block that is neither ``[...`` nor ``...]`` is made one), or its JSON, or its
    text where it is not JSON."""
    check_text_length(text)
    out: list[Any] = []
    for body in _bodies(text):
        if not body.startswith("[") and not body.endswith("]"):
            body = f"[{body}]"
        try:
            value: Any = json.loads(body)
        except (ValueError, RecursionError):
            value = body
        if isinstance(value, list):
            # a call written as a Python literal inside the list is read as a literal
            out.extend(python_literal(i) if isinstance(i, str) else i for i in value)
        else:
            out.append(value)
    return out


class PhiFCFamily(Family):
    handlers = ("PhiFCHandler",)
    name = "phi-fc"
    system_prompt = False
    decoder = ArchDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        system = text_starting(self.root, _PROMPT, "You are a helpful assistant with some tools")
        if messages[0].get("role") == "system":
            system, messages = content_text(messages[0]), messages[1:]
        tools = "".join(f"{json.dumps(doc)}\n" for doc in functions)
        out = [f"<|system|>{system}<|tool|>{tools}<|/tool|><|end|>"]
        out.extend(f"<|{m.get('role')}|>{content_text(m)}<|end|>" for m in messages)
        out.append("<|assistant|>")
        return "".join(out)

    def read(self, raw: str) -> RawAnswer:
        return stored_calls_or_text(raw, phi_calls(raw))
