"""The handlers that write every message in plain ChatML (``<|im_start|>role\\n content
<|im_end|>``), tool results in a ``tool`` turn, and read answers as the prompting decoders do:
``MiniCPMHandler`` (MiniCPM3) and ``BielikHandler`` (Bielik, after a ``<s>``)."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.handlers.base import Family, content_text


def chatml(messages: list[dict[str, Any]], start: str = "") -> str:
    """Every message as a ChatML turn, then the assistant's opening."""
    turns = [f"<|im_start|>{m.get('role')}\n{content_text(m)}<|im_end|>\n" for m in messages]
    return start + "".join(turns) + "<|im_start|>assistant\n"


class MiniCPMFamily(Family):
    handlers = ("MiniCPMHandler",)
    name = "minicpm"

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        return chatml(messages)


class BielikFamily(Family):
    handlers = ("BielikHandler",)
    name = "bielik"

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        return chatml(messages, "<s>")
