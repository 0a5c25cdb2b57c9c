"""FunctionGemma's handler (``FunctionGemmaHandler``, Gemma 3 270M tuned for function
calling): Gemma turns with a ``developer`` turn that holds the system text (the question's or
the handler's) and each function as a ``<start_function_declaration>`` in FunctionGemma's own
compact schema notation, strings wrapped in ``<escape>``; results fed back as
``<start_function_response>response:NAME{...}`` blocks. Answers are
``<start_function_call>call:NAME{key:value,...}<end_function_call>`` blocks, whose arguments
are read by the handler's forgiving scanner (:class:`ArgumentScanner`)."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import Decoder, Family, calls_from_pairs, content_text, execute_form
from pytest_bfcl.handlers.texts import module_text

ESCAPE = "<escape>"
START_TURN, END_TURN = "<start_of_turn>", "<end_of_turn>"
START_DECLARATION, END_DECLARATION = "<start_function_declaration>", "<end_function_declaration>"
START_CALL, END_CALL = "<start_function_call>", "<end_function_call>"
START_RESPONSE, END_RESPONSE = "<start_function_response>", "<end_function_response>"
CALL_PREFIX = "call:"
# keys of a properties map that are schema words, not parameters (the handler skips them)
_SCHEMA_WORDS = {"description", "type", "properties", "required", "nullable"}
_STRUCTURE = "{[:]},"


def _escaped(value: Any) -> str:
    return f"{ESCAPE}{value}{ESCAPE}"


def written_value(value: Any, escape_keys: bool = True) -> str:
    """A value in FunctionGemma's notation: text escaped, objects with sorted keys."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _escaped(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(written_value(item, escape_keys) for item in value) + "]"
    if isinstance(value, dict):
        parts = [
            f"{_escaped(key) if escape_keys else key}:{written_value(item, escape_keys)}"
            for key, item in sorted(value.items())
        ]
        return "{" + ",".join(parts) + "}"
    return str(value)


def _type_word(value: Any) -> str:
    return str(value).upper()


def _property(key: str, schema: dict[str, Any]) -> str:
    kind = _type_word(schema.get("type", ""))
    out = [f"{key}:{{description:{_escaped(schema.get('description', ''))}"]
    if kind == "STRING" and "enum" in schema:
        out.append(f",enum:{written_value(schema['enum'])}")
    elif kind == "OBJECT":
        out.append(",properties:{" + _parameters(schema.get("properties", {})) + "}")
        if schema.get("required"):
            out.append(",required:[" + ",".join(_escaped(r) for r in schema["required"]) + "]")
    elif kind == "ARRAY":
        out.append(_items(schema.get("items", {})))
    out.append(f",type:{_escaped(kind)}}}")
    return "".join(out)


def _items(items: dict[str, Any]) -> str:
    if not items:
        return ""
    parts = []
    for key, value in sorted(items.items()):
        if value is None:
            continue
        if key == "properties" and isinstance(value, dict):
            parts.append("properties:{" + _parameters(value) + "}")
        elif key == "required":
            parts.append("required:[" + ",".join(_escaped(r) for r in value) + "]")
        elif key == "type":
            kinds = _type_word(value) if isinstance(value, str) else [_type_word(v) for v in value]
            parts.append(f"type:{written_value(kinds)}")
        else:
            parts.append(f"{key}:{written_value(value)}")
    return ",items:{" + ",".join(parts) + "}"


def _parameters(properties: dict[str, Any]) -> str:
    if not properties:
        return ""
    return ",".join(
        _property(key, schema)
        for key, schema in sorted(properties.items())
        if key not in _SCHEMA_WORDS
    )


def declaration(doc: dict[str, Any]) -> str:
    """One function as a declaration (a ``function`` wrapper, if any, looked through)."""
    function = doc["function"] if isinstance(doc.get("function"), dict) else doc
    out = [
        f"declaration:{function.get('name', '')}"
        f"{{description:{_escaped(function.get('description', ''))}"
    ]
    parameters = function.get("parameters", {})
    if parameters:
        if parameters.get("properties"):
            out.append(",properties:{" + _parameters(parameters["properties"]) + "}")
        if parameters.get("required"):
            out.append(",required:[" + ",".join(_escaped(r) for r in parameters["required"]) + "]")
        if "type" in parameters:
            out.append(f",type:{_escaped(_type_word(parameters['type']))}")
    out.append("}")
    return "".join(out)


def _tool_turn(message: dict[str, Any]) -> str:
    """A result: its JSON object in the notation (keys bare), anything else as escaped text."""
    content = message.get("content", "")
    try:
        value = json.loads(content) if isinstance(content, str) else content
    except (ValueError, RecursionError):
        value = content
    name = message.get("name", "unknown_tool")
    if isinstance(value, dict):
        body = written_value(value, escape_keys=False)
    else:
        body = f"{{value:{_escaped(str(content))}}}"
    return f"{START_RESPONSE}response:{name}{body}{END_RESPONSE}"


class ArgumentScanner:
    """The handler's reading of a call's ``{key:value,...}``: one pass over the text, values
    pushed into the open container, a key taken from the value before a ``:``; unbalanced or
    odd input is read as far as it goes, never refused."""

    def __init__(self) -> None:
        self.root: list[Any] = []
        self.stack: list[Any] = [self.root]
        self.keys: list[Any] = []
        self.buffer: list[str] = []
        self.pending: Any = None

    def read(self, text: str) -> dict[str, Any]:
        cursor = 0
        while cursor < len(text):
            if text.startswith(ESCAPE, cursor):
                cursor = self._escaped_text(text, cursor)
                continue
            char = text[cursor]
            if char in _STRUCTURE:
                self._commit()
                self._structure(char)
            else:
                self.buffer.append(char)
            cursor += 1
        self._commit()
        first = self.root[0] if self.root else None
        return first if isinstance(first, dict) else {}

    def _escaped_text(self, text: str, start: int) -> int:
        begin = start + len(ESCAPE)
        end = text.find(ESCAPE, begin)
        if end == -1:  # unclosed: the rest, its opening tag included
            value, cursor = text[start:], len(text)
        else:
            value, cursor = text[begin:end], end + len(ESCAPE)
        self._commit()
        self._add(value)
        return cursor

    def _structure(self, char: str) -> None:
        if char in "{[":
            container: Any = {} if char == "{" else []
            self._add(container)
            self.stack.append(container)
            if char == "{":
                self.keys.append(None)
        elif char in "}]":
            if len(self.stack) > 1:
                self.stack.pop()
                if char == "}" and self.keys:
                    self.keys.pop()
        elif char == ":":
            # the value just committed names the key (as text: 1 -> "1", true -> "True")
            key = None if self.pending is None else str(self.pending)
            if self.pending is not None:
                self.pending = None
            if key is not None and isinstance(self.stack[-1], dict) and self.keys:
                self.keys[-1] = key
            return
        self.pending = None

    def _commit(self) -> None:
        if not self.buffer:
            return
        raw = "".join(self.buffer).strip()
        self.buffer.clear()
        if raw:
            self._add(_primitive(raw))

    def _add(self, value: Any) -> None:
        container = self.stack[-1]
        if isinstance(container, list):
            container.append(value)
            return
        key = self.keys[-1] if self.keys else None
        if key is not None:
            container[key] = value
            self.keys[-1] = None
        else:
            self.pending = value


def _primitive(text: str) -> Any:
    if text in ("null", "true", "false"):
        return {"null": None, "true": True, "false": False}[text]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def functiongemma_calls(text: Any) -> list[tuple[str, dict[str, Any]]]:
    """``(name, arguments)`` of each ``<start_function_call>call:...`` block."""
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    calls: list[tuple[str, dict[str, Any]]] = []
    start = text.find(START_CALL)
    while start != -1:
        end = text.find(END_CALL, start + len(START_CALL))
        if end == -1:
            break
        body = text[start + len(START_CALL) : end].strip()
        start = text.find(START_CALL, end + len(END_CALL))
        if not body.startswith(CALL_PREFIX):
            continue
        brace = body.find("{")
        if brace == -1:
            calls.append((body[len(CALL_PREFIX) :].strip(), {}))
            continue
        calls.append((body[len(CALL_PREFIX) : brace].strip(), ArgumentScanner().read(body[brace:])))
    return calls


class FunctionGemmaDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        return calls_from_pairs(functiongemma_calls(text))

    def decode_execute(self, text: Any) -> list[str]:
        return [execute_form(name, args, ", ") for name, args in functiongemma_calls(text)]


class FunctionGemmaFamily(Family):
    handlers = ("FunctionGemmaHandler",)
    name = "functiongemma"
    system_prompt = False
    decoder = FunctionGemmaDecoder()

    def _developer_turn(self, messages: list[dict[str, Any]], functions: list[Any]) -> str:
        system = module_text(self.root, "functiongemma", "SYSTEM_PROMPT")
        if messages and messages[0].get("role") == "system":
            system = content_text(messages[0])
        if not functions and not system:
            return ""
        out = [f"{START_TURN}developer\n", f"{system.strip()}\n" if system else ""]
        out.extend(f"{START_DECLARATION}{declaration(doc)}{END_DECLARATION}" for doc in functions)
        out.append(f"{END_TURN}\n")
        return "".join(out)

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        out = [self._developer_turn(messages, functions)]
        rest = messages[1:] if messages and messages[0].get("role") == "system" else messages
        for message in rest:
            role = message.get("role")
            if role == "user":
                out.append(f"{START_TURN}user\n{content_text(message).strip()}{END_TURN}\n")
            elif role == "assistant":
                text = content_text(message).strip()
                out.append(f"{START_TURN}model\n{text}{END_TURN}\n")
            elif role == "tool":
                out.append(_tool_turn(message))
        out.append(f"{START_TURN}model\n")
        return "".join(out)
