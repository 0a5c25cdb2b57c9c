"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, llama.cpp, a gateway), through the
official ``openai`` SDK, in function-calling or prompting mode.

Server trouble (429, 5xx, timeouts, dropped connections) is retried with exponential back-off and
jitter; when retries run out the entry is an infrastructure error, not a model failure. A
malformed answer (bad JSON arguments, unknown tool, no choice, truncated text) is stored as the
model's output and scored like any other.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import threading
import time
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict

from pytest_bfcl.check.single_turn import ScoringOptions, language_of, prompt_format_of
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.errors import InfrastructureError, RunStopped
from pytest_bfcl.models.base import Generation, NotGenerated, StepReply, StepRequest, Task
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    system_prompt,
    to_openai_tools,
    with_language_hints,
)
from pytest_bfcl.run.cache import ResponseCache, cache_key

_SINGLE_TURN_KINDS = (Kind.AST, Kind.RELEVANCE, Kind.IRRELEVANCE, Kind.FORMAT_SENSITIVITY)


class EndpointSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str  # the name sent to the server
    base_urls: tuple[str, ...] = ()  # empty: the SDK's default (OPENAI_BASE_URL or OpenAI)
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    timeout: float = 120.0
    retries: int = 4
    backoff: float = 1.0  # first retry delay in seconds; doubles each time, with jitter
    identity: str = ""  # extra cache identity (serving flags, checkpoint hash)

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
        )


class InferenceError(InfrastructureError):
    """The server did not answer usably after the allowed retries (infrastructure)."""


class ServerDown(InferenceError, RunStopped):
    """The server is unreachable; remaining entries are not attempted."""


_TRANSPORT_MODULES = ("httpx", "httpcore", "h11", "ssl", "socket")


class _BadResponse(Exception):
    """A 200 answer whose body is not a chat completion (a proxy's error page, a cut body)."""


def _retryable(exc: Exception) -> bool:
    """Server trouble worth another try: 408/409/429/5xx, timeouts, unreadable bodies, and any
    transport failure (the SDK does not wrap every one, e.g. a connection dropped early)."""
    if isinstance(exc, _BadResponse):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    if isinstance(exc, openai.APIError | ConnectionError | TimeoutError):
        return True
    return type(exc).__module__.split(".")[0].startswith(_TRANSPORT_MODULES)


class OpenAIChatModel:
    concurrent = True  # worth generating many entries at once
    # After this many entries in a row exhausted their retries, the server counts as down:
    # later entries fail at once instead of each waiting through its retries.
    DOWN_AFTER = 3

    def __init__(
        self,
        settings: EndpointSettings,
        scoring: ScoringOptions,
        texts: ProtocolTexts,
        cache: ResponseCache | None = None,
        hook: Any = None,
    ) -> None:
        self.settings = settings
        self.scoring = scoring
        self.texts = texts
        self.cache = cache
        self.hook = hook  # request/response transforms registered by a project
        self.name = settings.model
        urls = settings.base_urls or (None,)
        self._clients = [self._client(url) for url in urls]
        self._next_client = itertools.cycle(self._clients)
        self._lock = threading.Lock()
        self._failure_streak = 0
        self.down_reason: str | None = None

    def close(self) -> None:
        """Close the connection pools: a process may build many models (test sessions,
        embedded use), and idle keep-alive connections would pile up as open files."""
        for client in self._clients:
            client.close()

    def _client(self, base_url: str | None) -> openai.OpenAI:
        key = os.environ.get(self.settings.api_key_env) or "EMPTY"  # local servers need none
        return openai.OpenAI(
            base_url=base_url, api_key=key, max_retries=0, timeout=self.settings.timeout
        )

    def metadata(self) -> dict[str, Any]:
        s = self.settings
        return {
            "kind": "openai-compatible",
            "served_model": s.model,
            "base_urls": list(s.base_urls),
            "sampling": {"temperature": s.temperature, "max_tokens": s.max_tokens, "seed": s.seed},
            "identity": s.identity,
        }

    # -- requests -----------------------------------------------------------------------------

    def build_request(self, task: Task) -> dict[str, Any]:
        entry = task.entry
        kind = CATEGORIES[entry.category].kind
        if kind not in _SINGLE_TURN_KINDS:
            raise NotGenerated(f"{entry.category} needs its multi-step runner")
        language = "python" if entry.format_config else language_of(entry.category)
        docs = with_language_hints(entry.function_sources(), language, self.texts)
        if entry.format_config:  # format sensitivity: the hint is applied twice (reference quirk)
            docs = with_language_hints(docs, "python", self.texts)
        messages = [m.model_dump() for m in entry.question[0]]
        if self.scoring.mode != "fc":
            prompt = system_prompt(docs, prompt_format_of(entry), self.texts)
            messages = insert_system_prompt(messages, prompt)
        return self._request(messages, docs)

    def build_step_request(self, step: StepRequest) -> dict[str, Any]:
        """One step of a conversation: the whole history, and the tools shown so far."""
        return self._request(step.messages, step.functions)

    def _request(
        self, messages: list[dict[str, Any]], docs: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The chat-completions body: sampling, the docs as tools in fc mode, the messages."""
        request: dict[str, Any] = {
            "model": self.settings.model,
            "temperature": self.settings.temperature,
        }
        if self.scoring.mode == "fc":
            tools = to_openai_tools(docs, self.texts)
            if tools:
                request["tools"] = tools
        request["messages"] = messages
        if self.settings.max_tokens is not None:
            request["max_tokens"] = self.settings.max_tokens
        if self.settings.seed is not None:
            request["seed"] = self.settings.seed
        return request

    def step(self, step: StepRequest) -> StepReply:
        record, cached = self._answer(self.build_step_request(step))
        return StepReply(cached=cached, **record)

    def cache_identity(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"identity": self.settings.identity, "mode": self.scoring.mode, "request": request}

    def generate(self, task: Task) -> Generation:
        record, cached = self._answer(self.build_request(task))
        return Generation(id=task.entry.id, cached=cached, **record)

    def _answer(self, request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The response record for a request, from the cache when it has it. A project's
        transforms apply before the cache key is taken and before the record is stored."""
        if self.hook is not None:
            self.hook.pytest_bfcl_transform_request(request=request, model=self.name)
        if self.cache is None:
            return self._transformed(self._complete(request)), False
        key = cache_key(self.cache_identity(request))
        record = self.cache.get(key)
        if record is not None:
            return record, True
        record = self._transformed(self._complete(request))
        self.cache.put(key, record)
        return record, False

    def _transformed(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.hook is not None:
            self.hook.pytest_bfcl_transform_response(record=record, model=self.name)
        return record

    def _complete(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.down_reason:
            raise ServerDown(self.down_reason)
        attempts = self.settings.retries + 1
        last: Exception | None = None
        for attempt in range(attempts):
            client = next(self._next_client)
            started = time.perf_counter()
            try:
                # The plain JSON request goes straight to the endpoint and the answer comes back
                # as bytes: the SDK's typed ``create`` re-walks every message and tool and builds
                # models of the response, which costs more CPU than the rest of a conversation
                # step and caps throughput at high concurrency.
                body = client.post("/chat/completions", body=request, cast_to=bytes)
                record = self._record(body, time.perf_counter() - started)
            except Exception as exc:  # classified below; never swallowed
                last = exc
                if not _retryable(exc):
                    raise InferenceError(f"the server refused the request: {exc}") from exc
                if attempt + 1 < attempts:
                    time.sleep(self._delay(attempt, exc))
                continue
            with self._lock:
                self._failure_streak = 0
            return record
        assert last is not None
        self._note_failure(last)
        raise InferenceError(f"no usable answer after {attempts} attempts: {last}") from last

    def _delay(self, attempt: int, exc: Exception) -> float:
        delay = self.settings.backoff * 2**attempt
        if isinstance(exc, openai.APIStatusError):
            retry_after = exc.response.headers.get("retry-after") if exc.response else None
            if retry_after and retry_after.replace(".", "", 1).isdigit():
                delay = max(delay, float(retry_after))
        return min(delay, 60.0) * (0.5 + random.random() / 2)

    def _note_failure(self, exc: Exception) -> None:
        # Entries whose retries all failed, one after another with no success between them: the
        # server is down or broken, and waiting out every remaining entry would take hours.
        with self._lock:
            self._failure_streak += 1
            if self._failure_streak >= self.DOWN_AFTER and not self.down_reason:
                urls = ", ".join(self.settings.base_urls) or "the default endpoint"
                self.down_reason = (
                    f"the model server at {urls} is unreachable or failing: {self.DOWN_AFTER} "
                    f"entries in a row got no answer after all retries (last: {exc})"
                )

    @staticmethod
    def _record(body: bytes, latency: float) -> dict[str, Any]:
        """The stored record of a chat completion (the response's JSON, read as plain data)."""
        try:
            response = json.loads(body)
        except ValueError as exc:
            raise _BadResponse(f"the server answered with a body that is not JSON: {exc}") from None
        if not isinstance(response, dict):
            raise _BadResponse(
                f"the server answered with JSON that is not an object: {body[:80]!r}"
            )
        choices = response.get("choices") or []
        first = choices[0] if choices else None
        choice = first if isinstance(first, dict) else {}
        message = choice.get("message") or {}
        calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        result: Any
        if calls:
            functions = [c.get("function") or {} for c in calls]
            result = [{f.get("name"): f.get("arguments")} for f in functions]
        else:
            result = message.get("content") if choices else ""
        usage = response.get("usage") or {}
        return {
            "result": result if result is not None else "",
            "tool_call_ids": [str(c.get("id", "")) for c in calls],
            "latency": round(latency, 4),
            "input_tokens": usage.get("prompt_tokens"),
            "output_tokens": usage.get("completion_tokens"),
            "reasoning": message.get("reasoning_content") or message.get("reasoning"),
            "finish_reason": choice.get("finish_reason"),
        }
