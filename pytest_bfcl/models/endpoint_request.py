"""What an OpenAI-compatible endpoint is sent: where (the base URL and headers, from the
environment variables the OpenAI SDK reads, without importing the SDK: its import took
0.3-0.4 s of every run's start) and the chat-completions body of an entry or of one step of a
conversation."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.models.base import NotGenerated, StepRequest, Task
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    system_prompt,
    to_openai_tools,
    with_language_hints,
)
from pytest_bfcl.models.leaderboard_wire import REFERENCE_TEMPERATURE, STORE, HistoryEcho
from pytest_bfcl.scoring import ScoringOptions
from pytest_bfcl.settings import SESSION_HEADER

# The largest answer read from a server. A chat completion with tool calls is a few kB; even a
# long reasoning trace stays under a megabyte. 8 MiB leaves ample room while a hostile or broken
# server sending hundreds of megabytes cannot fill memory and the cache.
MAX_RESPONSE_BYTES = 8 * 2**20
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def resolved_base_url(base_url: str | None) -> str:
    """The URL given, else ``OPENAI_BASE_URL``, else OpenAI's API; without a trailing slash."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def request_headers(key: str) -> dict[str, str]:
    """The key as a bearer token, and the organisation and project of ``OPENAI_ORG_ID`` and
    ``OPENAI_PROJECT_ID`` when set."""
    from pytest_bfcl import __version__

    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"pytest-bfcl/{__version__}",
        "Authorization": f"Bearer {key}",
    }
    if organization := os.environ.get("OPENAI_ORG_ID"):
        headers["OpenAI-Organization"] = organization
    if project := os.environ.get("OPENAI_PROJECT_ID"):
        headers["OpenAI-Project"] = project
    return headers


class EndpointSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str  # the name sent to the server
    base_urls: tuple[str, ...] = ()  # empty: OPENAI_BASE_URL, else OpenAI's own
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = REFERENCE_TEMPERATURE
    max_tokens: int | None = None
    seed: int | None = None
    timeout: float = 120.0  # deadline of one request, body included
    retries: int = 4
    backoff: float = 1.0  # first retry delay in seconds; doubles each time, with jitter
    identity: str = ""  # extra cache identity (serving flags, checkpoint hash)
    max_response_bytes: int = MAX_RESPONSE_BYTES
    extra_body: dict[str, Any] = {}  # fields added to every request
    history_echo: HistoryEcho = "as-returned"  # how an answer joins a conversation's history
    session_header: str = SESSION_HEADER  # names each conversation in its requests; "": none

    @classmethod
    def from_settings(
        cls, settings: Any, model: str, base_urls: tuple[str, ...], identity: str
    ) -> EndpointSettings:
        """Endpoint settings from a run's :class:`~pytest_bfcl.settings.Settings`."""
        return cls(
            model=model,
            base_urls=base_urls,
            api_key_env=settings.api_key_env,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            seed=settings.sampling_seed,
            timeout=settings.timeout,
            retries=settings.retries,
            identity=identity,
            max_response_bytes=settings.max_response_bytes,
            extra_body=settings.extra_body,
            history_echo=settings.history_echo,
            session_header=settings.session_header,
        )


def conversation_id(task: Task) -> str:
    """What names a conversation to the balancer and to a router (the session header): its
    entry, and its sample when the entry is asked several times (each is another
    conversation)."""
    return f"{task.entry.id}#{task.sample}" if task.sample else task.entry.id


@dataclass(frozen=True)
class RequestBuilder:
    """The chat-completions bodies of one endpoint model."""

    settings: EndpointSettings
    scoring: ScoringOptions
    texts: ProtocolTexts

    def for_task(self, task: Task) -> dict[str, Any]:
        """An entry answered with one request: its first turn, its functions (as tools in fc
        mode, in the system prompt otherwise)."""
        entry = task.entry
        # An entry on simulated applications (multi-turn, memory, web search) is a conversation;
        # one request cannot answer it.
        if entry.involved_classes:
            raise NotGenerated(f"{entry.category} needs its multi-step runner")
        docs = with_language_hints(entry.function_sources(), entry.language, self.texts)
        if entry.format_config:  # format sensitivity: the hint is applied twice (reference quirk)
            docs = with_language_hints(docs, "python", self.texts)
        messages = [m.model_dump() for m in entry.question[0]]
        if self.scoring.mode != "fc":
            prompt = system_prompt(docs, entry.prompt_format, self.texts)
            messages = insert_system_prompt(messages, prompt)
        return self.body(messages, docs)

    def for_step(self, step: StepRequest) -> dict[str, Any]:
        """One step of a conversation: the whole history, and the tools shown so far."""
        return self.body(step.messages, step.functions)

    def body(self, messages: list[dict[str, Any]], docs: list[dict[str, Any]]) -> dict[str, Any]:
        """The chat-completions body: the parameters the leaderboard's handler sends (model,
        temperature, ``store``), the docs as tools in fc mode (none when there are none), the
        messages; the token limit and seed only when the user sets them."""
        request: dict[str, Any] = {
            "model": self.settings.model,
            "temperature": self.settings.temperature,
            "store": STORE,
        }
        if self.scoring.mode == "fc":
            tools = to_openai_tools(docs, self.texts, self.scoring.underscore_to_dot)
            if tools:
                request["tools"] = tools
        request["messages"] = messages
        if self.settings.max_tokens is not None:
            request["max_tokens"] = self.settings.max_tokens
        if self.settings.seed is not None:
            request["seed"] = self.settings.seed
        request.update(self.settings.extra_body)  # none of the fields set above (checked)
        return request

    def ping(self) -> bytes:
        """The smallest chat request: one token (probing a replica)."""
        ping = {
            "model": self.settings.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
        }
        return json.dumps(ping).encode()
