"""ThinkAgent's handler (``ThinkAgentHandler``, function calling): Llama 3 markup without
blank lines after the headers, a system turn of dates only (the benchmark's system prompt,
put first as for any prompting handler, is left out), then one user turn with the handler's
instructions, the functions as Python writes a list of ``{name, description, parameters}``,
and the conversation's first message; nothing of the conversation after it is shown. An
answer is reasoning, ``</think>``, then a JSON list of ``{"name", "arguments"}`` (single
quotes read as double); the execute decoder fails on any call, as the handler's does."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.limits import check_text_length, check_value
from pytest_bfcl.decode.limits import short_repr as _short
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers.base import Decoder, Family, calls_by_name, content_text
from pytest_bfcl.handlers.texts import text_starting

_PROMPT = ("think_agent", "ThinkAgentHandler", "_format_prompt")
_SYSTEM = ("Cutting Knowledge Date", "Today Date")
_INSTRUCTIONS = (
    "Given the following functions",
    "Respond in the format",
    "Do not use variables",
    "Available tools:",
)


def _items(text: Any) -> list[Any]:
    """What the handler goes over as calls: the JSON after the first ``</think>`` ("[]" when
    there is none)."""
    if not isinstance(text, str):
        raise DecodeError(f"expected the answer's text, got {_short(text, 80)}")
    check_text_length(text)
    parts = text.strip().replace("'", '"').split("</think>", 1)
    body = parts[1].strip() if len(parts) > 1 else "[]"
    try:
        loaded = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"calls that are not JSON: {exc}") from None
    check_value(loaded)
    if isinstance(loaded, list):
        return loaded
    if isinstance(loaded, dict | str) and not loaded:
        return []  # an empty object or text has nothing to go over
    raise DecodeError(f"not a list of calls: {_short(loaded, 120)}")


class ThinkAgentDecoder(Decoder):
    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        return calls_by_name(_items(text))

    def decode_execute(self, text: Any) -> list[str]:
        items = _items(text)
        if items:  # the handler writes each call as text, then reads that text as a dict
            raise DecodeError("the handler's execute decoder reads no call")
        return []


class ThinkAgentFamily(Family):
    handlers = ("ThinkAgentHandler",)
    name = "thinkagent"
    decoder = ThinkAgentDecoder()

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        rest = messages[1:] if messages[0].get("role") == "system" else messages
        out = ["<|begin_of_text|><|start_header_id|>system<|end_header_id|>"]
        out.extend(text_starting(self.root, _PROMPT, start) for start in _SYSTEM)
        out.append("<|eot_id|>")
        if rest:
            tools = [
                {
                    "name": doc.get("name"),
                    "description": doc.get("description"),
                    "parameters": dict(doc.get("parameters", {}).get("properties", {})),
                }
                for doc in functions
            ]
            out.append("<|start_header_id|>user<|end_header_id|>")
            out.extend(text_starting(self.root, _PROMPT, start) for start in _INSTRUCTIONS)
            out.append(f"{tools}{content_text(rest[0]).strip()}<|eot_id|>")
        out.append("<|start_header_id|>assistant<|end_header_id|>")
        return "".join(out)
