"""Falcon 3's handler (``Falcon3FCHandler``, function calling): the one handler that asks the
checkpoint's tokenizer for the prompt, its chat template rendered with the functions as
``tools`` and the assistant's turn opened (:mod:`.chat_template`); no benchmark system
prompt. Answers are read from the first ``<tool_call>`` block: a JSON list of
``{"name", "arguments"}`` (or one such object), a code fence around it allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import (
    Decoder,
    Family,
    call_pairs,
    calls_from_pairs,
    execute_form,
)
from pytest_bfcl.handlers.chat_template import ChatTemplate, load_chat_template

OPEN, CLOSE = "<tool_call>", "</tool_call>"
FENCE = "```"


def _block(text: Any) -> str:
    """The text of the first ``<tool_call>`` block (to its ``</tool_call>`` or the end),
    stripped, one fence (and a ``json`` tag) taken off."""
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    if OPEN not in text:
        raise DecodeError(f"No <tool_call> found in the model's response: {_short(text, 200)}")
    body = text.split(OPEN)[1].split(CLOSE)[0].strip()
    if body.startswith(FENCE) and body.endswith(FENCE):
        body = body.strip("`").strip()  # as str.strip("```"): every backtick at either end
        if body.startswith("json"):
            body = body[4:].strip()
    return body


def falcon_calls(text: Any) -> list[tuple[Any, Any]]:
    """``(name, arguments)`` of each call in an answer's first ``<tool_call>`` block."""
    try:
        value = json.loads(_block(text))
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"Failed to decode the model's response: {exc}") from None
    check_value(value)
    return call_pairs(value if isinstance(value, list) else [value])


class FalconDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        return calls_from_pairs(falcon_calls(text))

    def decode_execute(self, text: Any) -> list[str]:
        return [execute_form(name, arguments) for name, arguments in falcon_calls(text)]


class Falcon3Family(Family):
    handlers = ("Falcon3FCHandler",)
    name = "falcon-3"
    system_prompt = False
    decoder = FalconDecoder()

    def __init__(self, root: Path, model_name: str = "", checkpoint: Path | None = None) -> None:
        super().__init__(root, model_name, checkpoint)
        if checkpoint is None:
            raise DatasetError(
                "the leaderboard's Falcon3FCHandler renders its prompt with the checkpoint's "
                "own chat template: give the checkpoint's folder with --bfcl-tokenizer"
            )
        self.template: ChatTemplate = load_chat_template(checkpoint)

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        return self.template.render(messages, functions)
