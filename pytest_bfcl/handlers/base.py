"""What every family of the leaderboard's open-weight handlers does, behind one interface.

The leaderboard asks an open-weight model on ``/v1/completions`` with one prompt string that
the model's handler renders itself from the conversation (its markup, where the system prompt
goes, how the tools are written, what of each past turn is kept), and reads the raw text back
with the handler's own decoder. A :class:`Family` is that handler, written here: it renders a
prompt from messages and functions, reads a raw answer (the stored answer, its reasoning, the
message it adds to the history), adds tool results to the history as the handler does,
decodes answers into calls, and names the request fields it sends besides the prompt.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_bfcl.decode import DecodeError, decode_prompting_ast, decode_prompting_execute
from pytest_bfcl.decode.limits import short_repr
from pytest_bfcl.decode.prompting import PromptFormat


@dataclass(frozen=True)
class RawAnswer:
    """A raw completion as the handler reads it: ``text`` is what it stores and decodes (the
    answer after any reasoning), ``reasoning`` what it records apart ("" for none), ``echo``
    the assistant message it adds to the conversation's history."""

    text: Any  # the raw text, or the calls read from it where the handler stores those
    reasoning: str
    echo: dict[str, Any] = field(default_factory=dict)


class Decoder:
    """How a handler reads an answer into calls; by default the benchmark's prompting
    decoders, as the handlers' common base class does."""

    # The handler stores calls it read as data (``[{name: arguments}]``), not the raw text:
    # its decoder reads stored results of any shape.
    structured = False

    def decode_ast(self, text: Any, language: str, fmt: PromptFormat) -> Any:
        return decode_prompting_ast(text, fmt, language)

    def decode_execute(self, text: Any) -> list[str]:
        return decode_prompting_execute(text)

    @property
    def own(self) -> bool:
        """Whether the handler decodes otherwise than the common prompting decoders."""
        return type(self).decode_ast is not Decoder.decode_ast


class Family(ABC):
    """One handler of the leaderboard's, for one model (Llama's markup depends on the name)."""

    # the handler classes of the pinned release this family answers for
    handlers: tuple[str, ...] = ()
    # a short name for the reports: "qwen", "llama-3.1", ...
    name: str = ""
    # whether the benchmark's prompting system prompt goes into the first turn's messages
    # (the common base class's way); function-calling handlers write their own instructions
    system_prompt = True
    decoder: Decoder = Decoder()

    def __init__(self, root: Path, model_name: str = "", checkpoint: Path | None = None) -> None:
        """``root``: the unpacked pinned release (its handler modules hold the instruction
        texts); ``model_name``: the leaderboard entry's model name; ``checkpoint``: the
        checkpoint's folder (``--bfcl-tokenizer``), which a family that renders with the
        checkpoint's own chat template reads."""
        self.root = root
        self.model_name = model_name
        self.checkpoint = checkpoint

    @abstractmethod
    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        """The prompt for a conversation so far and the functions shown at its start."""

    def prepare_turn(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A turn's messages as the handler prepares the question before asking (system
        prompt already in place); most leave them as they are."""
        return messages

    def read(self, raw: str) -> RawAnswer:
        """A raw completion as the common base class reads it: whole, no reasoning."""
        return RawAnswer(raw, "", {"role": "assistant", "content": raw})

    def tool_results(self, calls: list[str], results: list[str]) -> list[dict[str, Any]]:
        """The messages that feed a step's results back: one tool message per call, named
        by the call as decoded (the common base class's way)."""
        return [
            {"role": "tool", "name": call, "content": result}
            for call, result in zip(calls, results, strict=False)
        ]

    def request_fields(self) -> dict[str, Any]:
        """Fields the handler sends besides model, prompt, temperature and max_tokens."""
        return {}


def content_text(message: dict[str, Any]) -> str:
    """A message's content as the handlers read it (text; anything else as Python writes it,
    which no benchmark message is)."""
    content = message.get("content")
    return content if isinstance(content, str) else ("" if content is None else str(content))


def call_pairs(items: Any) -> list[tuple[Any, Any]]:
    """``(name, arguments)`` of items that must each be ``{"name", "arguments", ...}``."""
    out = []
    for call in items:
        if not isinstance(call, dict) or "name" not in call or "arguments" not in call:
            raise DecodeError(f"a call without a name or arguments: {short_repr(call, 120)}")
        out.append((call["name"], call["arguments"]))
    return out


def calls_from_pairs(pairs: Any) -> list[dict[Any, Any]]:
    """``[{name: arguments}]``, as the AST decoders give calls; an unhashable name fails."""
    try:
        return [{name: arguments} for name, arguments in pairs]
    except TypeError as exc:
        raise DecodeError(f"a call's name cannot be read: {exc}") from None


def calls_by_name(items: Any) -> list[dict[str, Any]]:
    """``[{name: arguments}]`` of items that must each be ``{"name", "arguments", ...}``."""
    return calls_from_pairs(call_pairs(items))


def execute_form(name: Any, arguments: Any, separator: str = ",", width: int = 80) -> str:
    """A call as the handlers' execute decoders write it, ``name(key=value,...)`` with each
    value's repr; arguments that are not an object fail, as the handlers' ``.items()`` does
    (``width``: how much of them the message shows)."""
    if not isinstance(arguments, dict):
        raise DecodeError(f"arguments that are not an object: {short_repr(arguments, width)}")
    rendered = separator.join(f"{key}={value!r}" for key, value in arguments.items())
    return f"{name}({rendered})"


def stored_calls_or_text(raw: str, calls: list[Any] | None) -> RawAnswer:
    """What a handler that stores the calls it read keeps: ``[{name: arguments}]`` when every
    item read is a ``{"name", "arguments"}`` object, else the raw text; the text echoed back."""
    echo = {"role": "assistant", "content": raw}
    shaped = all(isinstance(c, dict) and set(c) == {"name", "arguments"} for c in calls or [])
    if calls and shaped:
        try:
            stored = [{call["name"]: call["arguments"]} for call in calls]
        except TypeError as exc:
            raise DecodeError(f"a call's name cannot be read: {exc}") from None
        return RawAnswer(stored, "", echo)
    return RawAnswer(raw, "", echo)


def join_user_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of the messages with each run of consecutive user messages joined into one,
    their texts separated by a blank line (as the handlers that need alternating turns do)."""
    joined: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "user" and joined and joined[-1].get("role") == "user":
            last = joined[-1]
            joined[-1] = {**last, "content": f"{content_text(last)}\n\n{content_text(message)}"}
        else:
            joined.append(dict(message))
    return joined


def split_reasoning(text: str) -> tuple[str, str]:
    """``(answer, reasoning)`` as the Qwen-style handlers split a raw answer: the answer is
    what follows the last ``</think>`` (leading newlines removed), the reasoning the text
    before the first ``</think>``, from its last ``<think>`` on. No ``</think>``: the whole
    text, no reasoning."""
    if "</think>" not in text:
        return text, ""
    parts = text.split("</think>")
    reasoning = parts[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
    return parts[-1].lstrip("\n"), reasoning


__all__ = [
    "Decoder",
    "Family",
    "RawAnswer",
    "call_pairs",
    "calls_by_name",
    "calls_from_pairs",
    "content_text",
    "execute_form",
    "join_user_messages",
    "split_reasoning",
    "stored_calls_or_text",
]
