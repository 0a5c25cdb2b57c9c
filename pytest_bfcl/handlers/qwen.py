"""Qwen's handlers: ChatML markup (``<|im_start|>role ... <|im_end|>``); the prompting
handler (``QwenHandler``) puts the benchmark's system prompt first, the function-calling one
(``QwenFCHandler``) writes the functions into Qwen's own ``# Tools`` block and reads calls
from ``<tool_call>`` tags. Both cut a thinking model's reasoning out of its answer and keep it
in the history, where the template shows it again for the steps after the last user query.
Tool results go back as ``<tool_response>`` blocks in a user turn."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import (
    Decoder,
    Family,
    RawAnswer,
    content_text,
    execute_form,
    split_reasoning,
)
from pytest_bfcl.handlers.texts import text_starting

TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>\n", "\n</tool_call>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"
_FC_PROMPT = ("qwen_fc", "QwenFCHandler", "_format_prompt")


def _last_query(messages: list[dict[str, Any]]) -> int:
    """The index of the last user message that is a query (not tool responses written as a
    user turn); the last index when there is none."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message.get("content")
        if (
            message.get("role") == "user"
            and isinstance(content, str)
            and not (content.startswith(RESPONSE_OPEN) and content.endswith(RESPONSE_CLOSE))
        ):
            return index
    return len(messages) - 1


def _assistant(message: dict[str, Any], index: int, last: int, final: int) -> tuple[str, str]:
    """The opening of an assistant turn (its reasoning where the template shows it) and its
    text after any reasoning."""
    content = content_text(message)
    reasoning = message.get("reasoning_content") or ""
    if not reasoning and "</think>" in content:
        content, reasoning = split_reasoning(content)
    if index > last and (index == final or reasoning):
        head = f"<|im_start|>assistant\n<think>\n{reasoning.strip(chr(10))}\n</think>\n\n"
        return head + content.lstrip("\n"), content
    return f"<|im_start|>assistant\n{content}", content


def tool_calls_text(message: dict[str, Any], content: str) -> str:
    calls = message.get("tool_calls")
    if "tool_calls" not in message or not isinstance(calls, list):
        return ""
    out = []
    for call in calls:
        # Quirk: a newline before every call but a first one after no text, where "first"
        # means equal to the first (the handler compares the calls, not their places).
        if (call == calls[0] and content) or call != calls[0]:
            out.append("\n")
        if isinstance(call, dict) and "function" in call:
            call = call["function"]
        call = call if isinstance(call, dict) else {}
        arguments = call.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        out.append(f'<tool_call>\n{{"name": "{call.get("name")}", "arguments": {arguments}}}')
        out.append("\n</tool_call>")
    return "".join(out)


def tool_result(messages: list[dict[str, Any]], index: int, content: Any) -> str:
    """A tool result in ChatML: a run of consecutive results shares one user turn, each in
    its own ``<tool_response>`` block."""
    opens = index == 0 or messages[index - 1].get("role") != "tool"
    closes = index == len(messages) - 1 or messages[index + 1].get("role") != "tool"
    return (
        ("<|im_start|>user" if opens else "")
        + f"\n{RESPONSE_OPEN}\n{content}\n{RESPONSE_CLOSE}"
        + ("<|im_end|>\n" if closes else "")
    )


def _turns(messages: list[dict[str, Any]], with_calls: bool) -> str:
    """Every message after a leading system message, then the assistant's opening."""
    last, final = _last_query(messages), len(messages) - 1
    out: list[str] = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), content_text(message)
        if role == "user" or (role == "system" and index != 0):
            out.append(f"<|im_start|>{role}\n{content}<|im_end|>\n")
        elif role == "assistant":
            opening, text = _assistant(message, index, last, final)
            out.append(opening)
            if with_calls:
                out.append(tool_calls_text(message, text))
            out.append("<|im_end|>\n")
        elif role == "tool":
            out.append(tool_result(messages, index, content))
    out.append("<|im_start|>assistant\n")
    return "".join(out)


class QwenFamily(Family):
    handlers = ("QwenHandler",)
    name = "qwen"

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        head = ""
        if messages[0].get("role") == "system":
            head = f"<|im_start|>system\n{content_text(messages[0])}<|im_end|>\n"
        return head + _turns(messages, with_calls=False)

    def read(self, raw: str) -> RawAnswer:
        text, reasoning = split_reasoning(raw)
        echo = {"role": "assistant", "content": text, "reasoning_content": reasoning}
        return RawAnswer(text, reasoning, echo)


def tool_call_bodies(text: str) -> list[str]:
    """The text between each ``<tool_call>\\n`` and the next ``\\n</tool_call>``, in order
    (as a lazy regex over the whole text finds them; linear here)."""
    bodies: list[str] = []
    start = text.find(TOOL_CALL_OPEN)
    while start != -1:
        begin = start + len(TOOL_CALL_OPEN)
        end = text.find(TOOL_CALL_CLOSE, begin)
        if end == -1:  # an unclosed tag: nothing after it closes either
            break
        bodies.append(text[begin:end])
        start = text.find(TOOL_CALL_OPEN, end + len(TOOL_CALL_CLOSE))
    return bodies


def extract_tool_calls(text: str) -> list[Any]:
    """The JSON of every ``<tool_call>`` block; blocks that are not JSON are left out."""
    check_text_length(text)
    calls = []
    for body in tool_call_bodies(text):
        try:
            calls.append(json.loads(body))
        except (ValueError, RecursionError):
            continue
    return calls


def _calls_of(text: Any) -> list[dict[str, Any]]:
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    calls = extract_tool_calls(text)
    if any(not isinstance(call, dict) for call in calls):
        raise DecodeError(f"Model did not return a list of function calls: {_short(text, 200)}")
    for call in calls:
        if "name" not in call or "arguments" not in call:
            raise DecodeError(f"a tool call without a name or arguments: {_short(call, 120)}")
        check_value(call)
    return calls


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call["arguments"]
    if isinstance(arguments, str):  # the execute path reads JSON text as its JSON
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError) as exc:
            raise DecodeError(f"arguments that are not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise DecodeError(f"arguments that are not an object: {_short(arguments, 120)}")
    return arguments


class QwenFCDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        calls = _calls_of(text)
        out = []
        for call in calls:
            arguments = call["arguments"]
            if not isinstance(arguments, dict):  # the handler reads them with .items()
                raise DecodeError(f"arguments that are not an object: {_short(arguments, 120)}")
            out.append({call["name"]: dict(arguments)})
        return out

    def decode_execute(self, text: Any) -> list[str]:
        out = []
        for call in _calls_of(text):
            out.append(execute_form(call["name"], _arguments(call)))
        return out


class QwenFCFamily(Family):
    handlers = ("QwenFCHandler",)
    name = "qwen-fc"
    system_prompt = False
    decoder = QwenFCDecoder()
    # the handler method whose string literals hold the instruction texts
    prompt_method = _FC_PROMPT

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        return self.head(messages, functions) + _turns(messages, with_calls=True)

    def head(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        """The system turn: the question's system message and the tools block."""
        system = messages[0].get("role") == "system"
        if functions:
            head = "<|im_start|>system\n"
            if system:
                head += content_text(messages[0]) + "\n\n"
            return head + self.tools_block(functions)
        return f"<|im_start|>system\n{content_text(messages[0])}<|im_end|>\n" if system else ""

    def tools_block(self, functions: list[dict[str, Any]]) -> str:
        """The instructions around the functions, one JSON object a line, to the turn's end."""
        out = text_starting(self.root, self.prompt_method, "# Tools")
        out += "".join(f"\n{json.dumps(doc)}" for doc in functions)
        return out + text_starting(self.root, self.prompt_method, "\n</tools>")

    def read(self, raw: str) -> RawAnswer:
        calls = extract_tool_calls(raw)  # the whole answer, reasoning included
        text, reasoning = split_reasoning(raw)
        echo: dict[str, Any]
        if calls:
            echo = {"role": "assistant", "content": "", "tool_calls": calls}
        else:
            echo = {"role": "assistant", "content": text}
        echo["reasoning_content"] = reasoning
        return RawAnswer(text, reasoning, echo)
