"""Nanbeige's handler (``NanbeigeFCHandler``, function calling): Qwen's function-calling
prompt and reading (ChatML, ``<tool_call>`` blocks, reasoning kept for the steps after the
last query, results as ``<tool_response>`` blocks in a user turn) with Nanbeige's own system
texts: a tool-calling expert's instructions before the tools block where the question has no
system message, and a default system turn where there are no functions."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.handlers.base import content_text
from pytest_bfcl.handlers.qwen import QwenFCFamily
from pytest_bfcl.handlers.texts import text_starting


class NanbeigeFCFamily(QwenFCFamily):
    handlers = ("NanbeigeFCHandler",)
    name = "nanbeige-fc"
    prompt_method = ("nanbeige_fc", "NanbeigeFCHandler", "_format_prompt")

    def head(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        system = messages[0].get("role") == "system"
        if functions:
            lead = content_text(messages[0]) + "\n\n" if system else self._text("你")
            return "<|im_start|>system\n" + lead + self.tools_block(functions)
        if system:
            return f"<|im_start|>system\n{content_text(messages[0])}<|im_end|>\n"
        return self._text("<|im_start|>system\n ")  # the handler's default system turn

    def _text(self, start: str) -> str:
        return text_starting(self.root, self.prompt_method, start)
