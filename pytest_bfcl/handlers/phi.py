"""Phi's handler (``PhiHandler``, prompting): Phi-4's ChatML-like markup with ``<|im_sep|>``,
Phi-4-mini's ``<|role|>...<|end|>`` (by the model's name, as the handler tells them apart);
answers decoded as prompting answers after a leading code fence is taken off."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.decode import decode_prompting_ast, decode_prompting_execute
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import Decoder, Family, content_text

FENCES = ("```json", "```python")


def _unfenced(text: str) -> str:
    """The text without one leading fence of each kind, in the handler's order."""
    for fence in FENCES:
        if text.startswith(fence):
            text = text[len(fence) :]
    return text


class PhiDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        if isinstance(text, str):
            text = _unfenced(text.strip())  # the AST path strips first, the execute path not
        return decode_prompting_ast(text, fmt, language)

    def decode_execute(self, text: Any) -> list[str]:
        return decode_prompting_execute(_unfenced(text) if isinstance(text, str) else text)


class PhiFamily(Family):
    handlers = ("PhiHandler",)
    name = "phi"
    decoder = PhiDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        if "Phi-4-mini" in self.model_name:
            turns = [f"<|{m.get('role')}|>{content_text(m)}<|end|>" for m in messages]
            return "".join(turns) + "<|assistant|>"
        turns = [
            f"<|im_start|>{m.get('role')}<|im_sep|>{content_text(m)}<|im_end|>\n" for m in messages
        ]
        return "".join(turns) + "<|im_start|>assistant<|im_sep|>"
