"""What a model on OpenAI's Responses API is sent, as the leaderboard's Responses handler sends
it: the entry's messages as ``input`` items (``system`` messages in the ``developer`` role), the
tools flat (``{"type": "function", "name": ..., "parameters": ...}``), ``store`` off, and either
the temperature (other models) or encrypted reasoning and reasoning summaries (the reasoning
families, which refuse a temperature).

A conversation's history is kept by the runner in the chat-completions shape, with the items a
Responses answer returned standing in for its assistant messages
(:attr:`~pytest_bfcl.models.base.StepReply.echo`); :func:`input_items` turns it into the items
the API takes, so the answer items go back exactly as the server returned them, and each tool
result goes back as a ``function_call_output`` of its call."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.models.base import StepRequest, Task
from pytest_bfcl.models.endpoint_request import EndpointSettings, RequestBuilder
from pytest_bfcl.models.function_docs import to_openai_tools
from pytest_bfcl.scoring import ScoringOptions

# Model-name parts of the families that reason before answering: the leaderboard's handler
# sends them no temperature (the API refuses one) and asks for their reasoning instead.
REASONING_FAMILIES = ("o3", "o4-mini", "gpt-5")
# The fewest output tokens the Responses API accepts (the probe's one-token request).
PING_OUTPUT_TOKENS = 16


def is_reasoning_family(model_name: str) -> bool:
    """Whether the leaderboard treats ``model_name`` as a reasoning model on this API (by the
    same substring test its handler applies to the name it sends)."""
    return any(part in model_name for part in REASONING_FAMILIES)


def responses_tools(
    docs: list[dict[str, Any]], texts: ProtocolTexts, underscore_names: bool = True
) -> list[dict[str, Any]]:
    """The function docs as Responses tools: the chat-completions function, flat, typed."""
    return [flat_tool(tool) for tool in to_openai_tools(docs, texts, underscore_names)]


def flat_tool(chat_tool: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions tool as a Responses tool: its function's fields, then the type."""
    return {**chat_tool["function"], "type": "function"}


def input_item(message: dict[str, Any]) -> dict[str, Any]:
    """One history element as a Responses input item: an item the server returned (it has a
    ``type``) as it is; a system message as a developer message; a tool result as the output
    of its call; an assistant message of another client's making as text or calls."""
    if isinstance(message.get("type"), str):
        return message
    role = message.get("role")
    if role == "system":
        return {**message, "role": "developer"}
    if role == "tool":
        return {
            "type": "function_call_output",
            "call_id": message.get("tool_call_id", ""),
            "output": message.get("content", ""),
        }
    return message


def _assistant_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant message in the chat shape (a history made without Responses answers,
    such as one a project's hook built) as Responses items."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return [{"role": "assistant", "content": message.get("content") or ""}]
    items = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        function = function if isinstance(function, dict) else {}
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id", "") if isinstance(call, dict) else "",
                "name": function.get("name", ""),
                "arguments": function.get("arguments", ""),
            }
        )
    return items


def input_items(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A chat-shaped history (with returned items in place of answers) as ``input`` items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "assistant" and not isinstance(message.get("type"), str):
            items.extend(_assistant_items(message))
        else:
            items.append(input_item(message))
    return items


@dataclass(frozen=True)
class ResponsesRequestBuilder:
    """The Responses bodies of one endpoint model. ``reasoning``: the model is of a reasoning
    family (:func:`is_reasoning_family` of the name the leaderboard sends)."""

    settings: EndpointSettings
    scoring: ScoringOptions
    texts: ProtocolTexts
    reasoning: bool

    def for_task(self, task: Task) -> dict[str, Any]:
        """An entry answered with one request: the chat builder's messages and tools (the
        system prompt in prompting mode, the language hints), as Responses input."""
        chat = RequestBuilder(self.settings, self.scoring, self.texts).for_task(task)
        return self.body(chat["messages"], [flat_tool(t) for t in chat.get("tools", [])])

    def for_step(self, step: StepRequest) -> dict[str, Any]:
        """One step of a conversation: the whole history, and the tools shown so far."""
        fc = self.scoring.mode == "fc"
        return self.body(
            step.messages,
            responses_tools(step.functions, self.texts, self.scoring.underscore_to_dot)
            if fc
            else [],
        )

    def body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The Responses body, with the fields the leaderboard's handler sends (no ``tools``
        when there are none); the token limit only when the user sets one."""
        request: dict[str, Any] = {
            "input": input_items(messages),
            "model": self.settings.model,
            "store": False,
        }
        if self.reasoning:
            request["include"] = ["reasoning.encrypted_content"]
            request["reasoning"] = {"summary": "auto"}
        else:
            request["temperature"] = self.settings.temperature
        if tools:
            request["tools"] = tools
        if self.settings.max_tokens is not None:
            request["max_output_tokens"] = self.settings.max_tokens
        request.update(self.settings.extra_body)  # none of the fields set above (checked)
        return request

    def extra_body_problem(self) -> str | None:
        """Why ``--bfcl-extra-body`` cannot be sent on this API: it would replace a field this
        builder writes (the general ones are refused with the option)."""
        own = ("include", "reasoning") if self.reasoning else ()
        clash = [field for field in own if field in self.settings.extra_body]
        if not clash:
            return None
        return (
            f"--bfcl-extra-body cannot set {clash[0]!r} for {self.settings.model} on the "
            "Responses API: the plugin sets it for the reasoning families (as the leaderboard)"
        )

    def ping(self) -> bytes:
        """The smallest request (probing a replica)."""
        ping = {
            "model": self.settings.model,
            "input": "ping",
            "max_output_tokens": PING_OUTPUT_TOKENS,
            "store": False,
        }
        return json.dumps(ping).encode()
