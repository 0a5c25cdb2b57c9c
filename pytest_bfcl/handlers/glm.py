"""GLM-4's handler (``GLMHandler``, function calling): no benchmark system prompt; with
functions, GLM's own system turn after ``[gMASK]<sop>`` listing each function as an OpenAI
tool (indented JSON, dotted names with underscores) with its instruction; every message as
``<|role|>\\n content``; stop token ids sent with each request. An answer is a call as GLM
writes one: the function's name on the first line, its arguments as JSON on the second."""

from __future__ import annotations

import copy
import json
from typing import Any

from pytest_bfcl.dataset.openapi_tools import to_openai_tools
from pytest_bfcl.dataset.texts import load_texts
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import Decoder, Family, content_text, execute_form
from pytest_bfcl.handlers.texts import init_value, text_starting

_PROMPT = ("glm", "GLMHandler", "_format_prompt")


def _lines(text: Any) -> list[str]:
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    return text.split("\n")


def _arguments(text: str) -> Any:
    try:
        arguments = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"arguments that are not JSON: {exc}") from None
    check_value(arguments)
    return arguments


class GLMDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        lines = _lines(text)
        if len(lines) == 1:  # no arguments line: the text itself (no call; the checker fails it)
            return [lines[0]]
        return [{lines[0]: _arguments(lines[1])}]  # lines past the second are not read

    def decode_execute(self, text: Any) -> list[str]:
        lines = _lines(text)
        if len(lines) == 1:
            # The handler reads a lone line as a list of calls: only an empty one reads.
            if lines[0]:
                raise DecodeError(f"a call without arguments: {_short(lines[0], 120)}")
            return []
        return [execute_form(lines[0], _arguments(lines[1]), width=120)]


class GLMFamily(Family):
    handlers = ("GLMHandler",)
    name = "glm"
    system_prompt = False
    decoder = GLMDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        out = []
        tools = to_openai_tools(copy.deepcopy(functions), load_texts(self.root))
        if tools:
            out.append(text_starting(self.root, _PROMPT, "[gMASK]<sop>"))
            instruction = text_starting(self.root, _PROMPT, "\n在")
            for tool in tools:
                function = tool["function"]
                out.append(f"\n\n## {function['name']}\n\n{json.dumps(function, indent=4)}")
                out.append(instruction)
        out.extend(f"<|{m.get('role')}|>\n{content_text(m)}" for m in messages)
        out.append("<|assistant|>")
        return "".join(out)

    def request_fields(self) -> dict[str, Any]:
        stop = init_value(self.root, "glm", "GLMHandler", "stop_token_ids")
        return {"stop_token_ids": copy.deepcopy(stop)}
