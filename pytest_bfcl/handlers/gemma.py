"""Gemma 3's handler (``GemmaHandler``, prompting): the system prompt folded into the first
turn, ``<start_of_turn>role ... <end_of_turn>``; the question's consecutive user messages are
joined and its assistant messages named ``model`` before the conversation starts."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.handlers.base import Family, content_text, join_user_messages


class GemmaFamily(Family):
    handlers = ("GemmaHandler",)
    name = "gemma"

    def prepare_turn(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        joined = join_user_messages(messages)
        for message in joined:
            if message.get("role") == "assistant":
                message["role"] = "model"
        return joined

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        prefix, rest = "", messages
        if messages[0].get("role") == "system":
            prefix, rest = content_text(messages[0]).strip() + "\n\n", messages[1:]
        out = ["<bos>"]
        for index, message in enumerate(rest):
            lead = prefix if index == 0 else ""
            text = content_text(message).strip()
            out.append(f"<start_of_turn>{message.get('role')}\n{lead}{text}<end_of_turn>\n")
        out.append("<start_of_turn>model\n")
        return "".join(out)
