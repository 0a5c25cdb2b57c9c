"""xLAM's handlers (``SalesforceLlamaHandler``, ``SalesforceQwenHandler``; function
calling): the handler's tool instructions and the functions as indented JSON in the system
turn (the question's own system message, else xLAM's default, before them), the conversation
in Llama 3's or ChatML markup with results in an ``ipython``/``tool`` turn; answers are JSON,
one call or a list, or calls separated by ``;``."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import MAX_CALLS, check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import (
    Decoder,
    Family,
    call_pairs,
    calls_from_pairs,
    content_text,
    execute_form,
)
from pytest_bfcl.handlers.texts import text_starting

# The instruction texts in the order the handler writes them, by how each begins.
_INSTRUCTIONS = (
    "You have access to a set of tools",
    '[{"name": "tool_call_name"',
    "If no tool is suitable",
    "Do not interpret or respond",
    "For tasks that don't require tools",
)
_DEFAULT_SYSTEM = "You are a helpful assistant that can use tools"


def _calls(text: Any, semicolons: bool = True) -> list[tuple[Any, Any]]:
    """``(name, arguments)`` of each call: a JSON list or object, else (``semicolons``) JSON
    objects separated by ``;``."""
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    try:
        calls = json.loads(text)
        if not isinstance(calls, list):
            calls = [calls]
    except json.JSONDecodeError as exc:
        if not semicolons:
            raise DecodeError(f"unreadable JSON: {exc}") from None
        parts = text.split(";")
        if len(parts) > MAX_CALLS:
            raise DecodeError(f"{len(parts):,} calls; at most {MAX_CALLS:,} are read") from None
        try:
            calls = [json.loads(part.strip()) for part in parts]
        except (ValueError, RecursionError) as exc:
            raise DecodeError(f"a call that is not JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"unreadable JSON: {exc}") from None
    check_value(calls)
    return call_pairs(calls)


class XlamDecoder(Decoder):
    semicolons = True  # calls separated by ";" read where the text is not JSON

    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        return calls_from_pairs(_calls(text, self.semicolons))

    def decode_execute(self, text: Any) -> list[str]:
        return [execute_form(name, args) for name, args in _calls(text, self.semicolons)]


class _XlamFamily(Family):
    system_prompt = False
    decoder = XlamDecoder()
    module = ""
    default_system = _DEFAULT_SYSTEM  # how the handler's own system message begins
    # (start, system opening, end of turn, a role's opening {role}, tool results' opening)
    markup: tuple[str, str, str, str, str] = ("", "", "", "", "")

    def _text(self, start: str) -> str:
        return text_starting(self.root, (self.module, self.handlers[0], "_format_prompt"), start)

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        begin, system_open, end, role_open, tool_open = self.markup
        system, rest = self._text(self.default_system), messages
        if messages[0].get("role") == "system":
            system, rest = content_text(messages[0]).strip(), messages[1:]
        out = [begin, system_open, system + "\n"]
        out.extend(self._text(start) for start in _INSTRUCTIONS)
        out.extend(json.dumps(doc, indent=4) + "\n\n" for doc in functions)
        out.append(end)
        for message in rest:
            if message.get("role") == "tool":
                content = message.get("content")
                shown = json.dumps(content) if isinstance(content, dict | list) else content
                out.append(f"{tool_open}{shown}{end}")
            elif message.get("tool_calls"):
                calls = [
                    {
                        "name": call["function"]["name"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    }
                    for call in message["tool_calls"]
                ]
                out.append(role_open.format(role="assistant") + json.dumps(calls) + end)
            else:
                text = content_text(message).strip()
                out.append(role_open.format(role=message.get("role")) + text + end)
        out.append(role_open.format(role="assistant"))
        return "".join(out)


class XlamLlamaFamily(_XlamFamily):
    handlers = ("SalesforceLlamaHandler",)
    name = "xlam-llama"
    module = "salesforce_llama"
    markup = (
        "<|begin_of_text|>",
        "<|start_header_id|>system<|end_header_id|>\n\n",
        "<|eot_id|>",
        "<|start_header_id|>{role}<|end_header_id|>\n\n",
        "<|start_header_id|>ipython<|end_header_id|>\n\n",
    )


class XlamQwenFamily(_XlamFamily):
    handlers = ("SalesforceQwenHandler",)
    name = "xlam-qwen"
    module = "salesforce_qwen"
    markup = (
        "",
        "<|im_start|>system\n",
        "<|im_end|>",
        "<|im_start|>{role}\n",
        "<|im_start|>tool\n",
    )


class BitAgentDecoder(XlamDecoder):
    semicolons = False


class BitAgentFamily(_XlamFamily):
    """BitAgent's handler (``BitAgentHandler``): xLAM's Llama prompt with BitAgent's own
    system message, and its decoder without the ``;`` fallback."""

    handlers = ("BitAgentHandler",)
    name = "bitagent"
    module = "bitagent"
    default_system = "You are a helpful Assistant named BitAgent"
    decoder = BitAgentDecoder()
    markup = XlamLlamaFamily.markup
