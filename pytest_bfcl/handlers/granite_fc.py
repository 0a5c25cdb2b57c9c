"""Granite's function-calling handler (``GraniteFunctionCallingHandler``, granite-20b):
``SYSTEM: ...`` with the functions as OpenAPI-typed JSON lines in its
``<|function_call_library|>``, then every message as ``ROLE:\\n text`` and ``ASSISTANT: ``.
Answers are ``<function_call>``-separated JSON objects; a piece that is not JSON is kept as
its text, and ``no_function`` reads as "No function is called"."""

from __future__ import annotations

import copy
import json
from typing import Any

from pytest_bfcl.dataset.openapi_tools import cast_properties
from pytest_bfcl.dataset.texts import load_texts
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import Decoder, Family, content_text, execute_form
from pytest_bfcl.handlers.texts import text_starting

_PROMPT = ("granite", "GraniteFunctionCallingHandler", "_format_prompt")
CALL_TAG = "<function_call>"
NO_FUNCTION = "No function is called"


def openapi_functions(functions: list[dict[str, Any]], float_hint: str) -> list[dict[str, Any]]:
    """The functions as the handler shows them: dots in names as underscores, parameters an
    ``object`` with JSON-schema types (a copy; the docs stay as they are)."""
    out = copy.deepcopy(functions)
    for doc in out:
        if "." in doc["name"]:
            doc["name"] = doc["name"].replace(".", "_")
        parameters = doc["parameters"]
        parameters["type"] = "object"
        parameters["properties"] = cast_properties(parameters["properties"], float_hint)
    return out


def _pieces(text: Any) -> list[Any]:
    """Each non-empty ``<function_call>``-separated piece: its JSON, or its text."""
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    out: list[Any] = []
    for piece in (part.strip() for part in text.split(CALL_TAG)):
        if not piece:
            continue
        try:
            value = json.loads(piece)
        except (ValueError, RecursionError):
            out.append(piece)
            continue
        check_value(value)
        out.append(_call(value))
    return out


def _call(value: Any) -> Any:
    """``(name, arguments)`` of a JSON piece, or the no-call sentence."""
    if not isinstance(value, dict):  # the handler reads it with .get()
        raise DecodeError(f"a call that is not a JSON object: {_short(value, 120)}")
    name = value.get("name", "")
    if not isinstance(name, str):
        raise DecodeError(f"a call whose name is not text: {_short(name, 80)}")
    name = name.strip()
    if name == "no_function":
        return NO_FUNCTION
    return (name, value.get("arguments", {}))


class GraniteFCDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        return [item if isinstance(item, str) else {item[0]: item[1]} for item in _pieces(text)]

    def decode_execute(self, text: Any) -> list[str]:
        out = []
        for item in _pieces(text):
            if isinstance(item, str):
                out.append(item)
                continue
            out.append(execute_form(*item))
        return out


class GraniteFCFamily(Family):
    handlers = ("GraniteFunctionCallingHandler",)
    name = "granite-fc"
    system_prompt = False
    decoder = GraniteFCDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        shown = openapi_functions(functions, load_texts(self.root).float_hint)
        head = text_starting(self.root, _PROMPT, "SYSTEM: ")
        head = head.replace("{functions_str}", "\n".join(json.dumps(doc) for doc in shown))
        turns = "".join(f"{str(m.get('role')).upper()}:\n{content_text(m)}\n\n" for m in messages)
        return f"{head}{turns}ASSISTANT: "
