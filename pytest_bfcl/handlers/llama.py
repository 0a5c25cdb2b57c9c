"""Llama's handlers. ``LlamaHandler`` (Llama 3 and 4 in both modes): every message in the
model's header markup (Llama 4's tokens for a Llama-4 model), the benchmark's system prompt
first, results in ``ipython`` turns, answers decoded as prompting answers. ``LlamaHandler_3_1``
(function calling): Llama 3.1's fixed system header with its cut-off and "today" dates, the
functions as indented JSON in the first user turn with its instructions, calls read as JSON
objects ``{"name", "parameters"}``, one or a list, or separated by ``;``."""

from __future__ import annotations

import ast
import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import Budget, check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.decode.python_calls import evaluate_literal_arithmetic
from pytest_bfcl.handlers.base import Decoder, Family, content_text

_PROMPT_3_1 = ("llama_3_1", "LlamaHandler_3_1", "_format_prompt")
PYTHON_TAG = "<|python_tag|>"


class LlamaFamily(Family):
    handlers = ("LlamaHandler",)
    name = "llama"

    @property
    def llama4(self) -> bool:
        return "Llama-4" in self.model_name  # the handler's own test, on the model's name

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        open_, close, end = (
            ("<|header_start|>", "<|header_end|>", "<|eot|>")
            if self.llama4
            else ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")
        )
        out = ["<|begin_of_text|>"]
        for message in messages:
            text = content_text(message).strip()
            out.append(f"{open_}{message.get('role')}{close}\n\n{text}{end}")
        out.append(f"{open_}assistant{close}\n\n")
        return "".join(out)

    def tool_results(self, calls: list[str], results: list[str]) -> list[dict[str, Any]]:
        return [{"role": "ipython", "content": result} for result in results]


def _literal(node: ast.expr, budget: Budget) -> Any:
    """A Python literal (what evaluating a model's list or dict of calls gives), read without
    evaluating anything: names, calls and attributes are refused."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [_literal(e, budget) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, budget) for e in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise DecodeError("dict unpacking is not a literal")
        keys = [_literal(k, budget) for k in node.keys if k is not None]
        try:
            return dict(zip(keys, (_literal(v, budget) for v in node.values), strict=True))
        except TypeError as exc:
            raise DecodeError(f"an unhashable key: {exc}") from None
    if isinstance(node, ast.UnaryOp | ast.BinOp):
        return evaluate_literal_arithmetic(node, budget)
    raise DecodeError(f"not a literal: {_short(ast.unparse(node), 80)}")


def python_literal(text: str) -> Any:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise DecodeError(f"not a Python literal: {type(exc).__name__}") from None
    return _literal(tree.body, Budget())


def llama_calls(text: Any) -> list[tuple[Any, Any]]:
    """``(name, parameters)`` of each call of a Llama 3.1 answer."""
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    text = text.replace(PYTHON_TAG, "")
    if ";" in text:  # calls separated by ";": each a JSON object
        try:
            calls: Any = [json.loads(part) for part in text.split(";")]
        except (ValueError, RecursionError) as exc:
            raise DecodeError(f"a call that is not JSON: {exc}") from None
    else:
        calls = python_literal(text)
        if isinstance(calls, dict):
            calls = [calls]
    check_value(calls)
    if not isinstance(calls, list | tuple):
        raise DecodeError(f"not a list of calls: {_short(calls, 120)}")
    out = []
    for call in calls:
        if not isinstance(call, dict) or "name" not in call or "parameters" not in call:
            raise DecodeError(f"a call without a name or parameters: {_short(call, 120)}")
        out.append((call["name"], call["parameters"]))
    return out


class Llama31Decoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        out = []
        for name, parameters in llama_calls(text):
            try:
                out.append({name: parameters})
            except TypeError as exc:  # an unhashable name
                raise DecodeError(f"a call's name cannot be read: {exc}") from None
        return out

    def decode_execute(self, text: Any) -> list[str]:
        out = []
        for name, parameters in llama_calls(text):
            if not isinstance(parameters, dict):
                raise DecodeError(f"parameters that are not an object: {_short(parameters, 80)}")
            rendered = ",".join(f"{key}={value!r}" for key, value in parameters.items())
            out.append(f"{name}({rendered})")
        return out


class Llama31Family(Family):
    handlers = ("LlamaHandler_3_1",)
    name = "llama-3.1"
    system_prompt = False
    decoder = Llama31Decoder()

    def _text(self, start: str) -> str:
        from pytest_bfcl.handlers.texts import text_starting

        return text_starting(self.root, _PROMPT_3_1, start)

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        system, rest = "", messages
        if messages[0].get("role") == "system":
            system, rest = content_text(messages[0]).strip(), messages[1:]
        out = [
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n",
            self._text("Environment:"),
            self._text("Cutting Knowledge Date:"),
            self._text("Today Date:"),
            system + "<|eot_id|>",
        ]
        first_user = True
        for message in rest:
            role = message.get("role")
            if role == "user" and first_user:
                first_user = False
                out.append("<|start_header_id|>user<|end_header_id|>\n\n")
                out.append(self._text("Given the following functions"))
                out.append(self._text("with its proper arguments"))
                out.append(self._text("Respond in the format"))
                out.append(self._text("Do not use variables"))
                out.extend(json.dumps(doc, indent=4) + "\n\n" for doc in functions)
                out.append(f"{content_text(message).strip()}<|eot_id|>")
            elif role == "tool":
                content = message.get("content")
                shown = json.dumps(content) if isinstance(content, dict | list) else content
                out.append(f"<|start_header_id|>ipython<|end_header_id|>\n\n{shown}<|eot_id|>")
            else:
                text = content_text(message).strip()
                out.append(f"<|start_header_id|>{role}<|end_header_id|>\n\n{text}<|eot_id|>")
        out.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
        return "".join(out)
