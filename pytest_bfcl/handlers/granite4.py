"""Granite 4's handler (``Granite4FCHandler``, function calling): ``<|start_of_role|>``
markup; the system turn holds the question's system message, then the tools block (the
functions as JSON lines between Granite's tool instructions), or Granite 4's default system
message when there is neither; calls echoed back as ``<tool_call>`` blocks, a run of results
as ``<tool_response>`` blocks in one user turn. Answers are decoded as Qwen's function-calling
answers are: every ``<tool_call>`` block's JSON."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.handlers.base import Family, RawAnswer, content_text
from pytest_bfcl.handlers.qwen import QwenFCDecoder, extract_tool_calls, tool_calls_text
from pytest_bfcl.handlers.texts import text_starting

_PROMPT = ("granite_4", "Granite4FCHandler", "_format_prompt")
OPEN_ROLE, END_ROLE, END = "<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>\n"


def _system(root: Any, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
    tools = ""
    if functions:
        tools = text_starting(root, _PROMPT, "You are a helpful assistant with access to the")
        tools += "".join(f"\n{json.dumps(doc)}" for doc in functions)
        tools += text_starting(root, _PROMPT, "\n</tools>")
    if messages[0].get("role") == "system":
        system = content_text(messages[0])
        return system + f"\n\n{tools}" if tools else system
    return tools or text_starting(root, _PROMPT, "You are a helpful assistant. Please")


def _tool_result(messages: list[dict[str, Any]], index: int) -> str:
    """A result in a user turn that a run of consecutive results shares."""
    opens = index == 0 or messages[index - 1].get("role") != "tool"
    closes = index == len(messages) - 1 or messages[index + 1].get("role") != "tool"
    return (
        (f"{OPEN_ROLE}user{END_ROLE}" if opens else "")
        + f"\n<tool_response>\n{content_text(messages[index])}\n</tool_response>"
        + (END if closes else "")
    )


class Granite4Family(Family):
    handlers = ("Granite4FCHandler",)
    name = "granite-4"
    system_prompt = False
    decoder = QwenFCDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        out = [f"{OPEN_ROLE}system{END_ROLE}{_system(self.root, messages, functions)}{END}"]
        start = 1 if messages[0].get("role") == "system" else 0
        for index in range(start, len(messages)):
            message = messages[index]
            role, content = message.get("role"), content_text(message)
            if role in ("user", "system"):
                out.append(f"{OPEN_ROLE}{role}{END_ROLE}{content}{END}")
            elif role == "assistant":
                out.append(f"{OPEN_ROLE}{role}{END_ROLE}{content}")
                out.append(tool_calls_text(message, content))
                out.append(END)
            elif role == "tool":
                out.append(_tool_result(messages, index))
        out.append(f"{OPEN_ROLE}assistant{END_ROLE}")
        return "".join(out)

    def read(self, raw: str) -> RawAnswer:
        calls = extract_tool_calls(raw)
        echo: dict[str, Any] = {"role": "assistant", "content": raw}
        if calls:
            echo = {"role": "assistant", "content": "", "tool_calls": calls}
        return RawAnswer(raw, "", echo)
