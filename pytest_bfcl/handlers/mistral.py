"""Mistral's function-calling handler (``MistralFCHandler``, Ministral): no benchmark system
prompt; ``<s>``, user turns in ``[INST]...[/INST]``, the functions in ``[AVAILABLE_TOOLS]``
before the last user turn (and any equal to it), the system message only in a user turn that
ends the prompt, assistant turns ending with ``</s>``, results in ``[TOOL_RESULTS]`` with the
call's id. An answer that is JSON is read as a list of ``{"name", "arguments"}`` calls, kept in
the history as ``[TOOL_CALLS]`` with an id given to each, and stored as ``[{name:
arguments}]``; other text is stored as it is.

The handler draws each call's id at random (nine letters and digits); here an id is drawn
from the call itself and its place in the answer, so the same answer gives the same prompt
and the response cache answers it again."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.handlers.arch import ArchDecoder
from pytest_bfcl.handlers.base import Family, RawAnswer, content_text

BOS, EOS = "<s>", "</s>"
ID_LENGTH = 9  # the template refuses other lengths


def call_id(index: int, call: str) -> str:
    """The id of the ``index``-th call of an answer, written as the execute decoder writes it."""
    return hashlib.sha256(f"{index}:{call}".encode()).hexdigest()[:ID_LENGTH]


def _execute_form(item: dict[str, Any]) -> str:
    """A call as the execute decoder writes it; "" where it cannot (the decoder fails then)."""
    arguments: Any = item.get("arguments")
    try:
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        rendered = ",".join(f"{key}={value!r}" for key, value in arguments.items())
    except (ValueError, RecursionError, AttributeError):
        return ""
    return f"{item.get('name')}({rendered})"


def _tools_block(functions: list[dict[str, Any]]) -> str:
    """The functions as the handler writes them (text values unescaped, as its template)."""
    docs = []
    for doc in functions:
        fields = ", ".join(
            f'"{key}": "{value}"' if isinstance(value, str) else f'"{key}": {json.dumps(value)}'
            for key, value in doc.items()
            if key != "return"
        )
        docs.append(f'{{"type": "function", "function": {{{fields}}}}}')
    return "[AVAILABLE_TOOLS][" + ", ".join(docs) + "][/AVAILABLE_TOOLS]"


class MistralFCFamily(Family):
    handlers = ("MistralFCHandler",)
    name = "mistral-fc"
    system_prompt = False
    decoder = ArchDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        system, rest = None, messages
        if messages[0].get("role") == "system":
            system, rest = content_text(messages[0]), messages[1:]
        users = [m for m in rest if m.get("role") == "user"]
        out = [BOS]
        for index, message in enumerate(rest):
            role, content = message.get("role"), content_text(message)
            if role == "user":
                # Quirk: compared by value, so an earlier user message equal to the last
                # one is shown the functions too.
                if functions and message == users[-1]:
                    out.append(_tools_block(functions))
                if index == len(rest) - 1 and system:
                    out.append(f"[INST]{system}\n\n{content}[/INST]")
                else:
                    out.append(f"[INST]{content}[/INST]")
            elif role == "assistant":
                out.append(f"{content}{EOS}")
            elif role == "tool":
                result = {"content": message.get("content"), "call_id": message.get("tool_call_id")}
                out.append(f"[TOOL_RESULTS]{json.dumps(result)}[/TOOL_RESULTS]")
        return "".join(out)

    def read(self, raw: str) -> RawAnswer:
        check_text_length(raw)
        try:
            loaded = json.loads(raw)
        except json.JSONDecodeError:
            return RawAnswer(raw, "", {"role": "assistant", "content": raw})
        except RecursionError:
            raise DecodeError("JSON nested too deeply") from None
        check_value(loaded)
        if isinstance(loaded, dict) and not loaded:
            items: Any = []  # an empty object reads as no calls (it has no items to go over)
        elif isinstance(loaded, list) and all(isinstance(item, dict) for item in loaded):
            items = loaded
        else:  # the handler fails on other JSON
            raise DecodeError(f"JSON that is not a list of calls: {_short(loaded, 120)}")
        for index, item in enumerate(items):
            item["id"] = call_id(index, _execute_form(item))
        history = f"[TOOL_CALLS]{json.dumps(loaded)}"
        stored = []
        for item in items:
            if "name" not in item or "arguments" not in item:
                raise DecodeError(f"a call without a name or arguments: {_short(item, 120)}")
            try:
                stored.append({item["name"]: item["arguments"]})
            except TypeError as exc:
                raise DecodeError(f"a call's name cannot be read: {exc}") from None
        return RawAnswer(stored, "", {"role": "assistant", "content": history})

    def tool_results(self, calls: list[str], results: list[str]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": call_id(index, call), "content": result}
            for index, (call, result) in enumerate(zip(calls, results, strict=False))
        ]
