"""The completions route: an open-weight model asked as the leaderboard's handler for its
family asks it (:mod:`pytest_bfcl.handlers`), on any OpenAI-compatible server's
``/v1/completions``: one prompt the handler renders, the leaderboard's temperature, its
``max_tokens`` rule from the prompt's token count, its stop ids; the raw text read back as the
handler reads it (reasoning cut out, the history echo) and decoded by its decoder. Everything
of :class:`OpenAIChatModel` else: the cache (which keeps the raw text), retries, failover,
the server-down rule, the probe."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.handlers import Family
from pytest_bfcl.handlers.tokens import PromptBudget, max_tokens_for
from pytest_bfcl.models.base import Generation, StepReply, StepRequest, Task
from pytest_bfcl.models.cache import ResponseCache
from pytest_bfcl.models.endpoint_errors import Failure, InferenceError
from pytest_bfcl.models.endpoint_request import EndpointSettings
from pytest_bfcl.models.endpoint_response import (
    generation_fields,
    json_object,
    oversized_record,
    text_of,
    token_count,
)
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    system_prompt,
    with_language_hints,
)
from pytest_bfcl.models.openai_chat import OpenAIChatModel
from pytest_bfcl.routing.balancer import Replica, endpoint_url
from pytest_bfcl.scoring import ScoringOptions

WIRE_FORMAT = "completions"


@dataclass(frozen=True)
class HandlerRoute:
    """How a leaderboard handler asks: its family (prompt, decoder, request fields) and the
    token budget its ``max_tokens`` rule counts with (None: the server counts)."""

    family: Family
    budget: PromptBudget | None


def client_arguments(
    route: HandlerRoute | None,
    endpoint: EndpointSettings,
    scoring: ScoringOptions,
    texts: ProtocolTexts,
    cache: ResponseCache | None,
    hook: Any,
) -> tuple[Any, ...]:
    """The positional arguments of the client a route asks with: the chat client's (None) or
    :class:`CompletionsModel`'s, for a class that layers servers over either."""
    if route is None:
        return (endpoint, scoring, texts, cache, hook)
    return (endpoint, scoring, texts, route.family, route.budget, cache, hook)


class CompletionsReplica(Replica):
    """A replica whose generation route is ``/completions``."""

    @property
    def chat_url(self) -> str:
        return endpoint_url(self.base_url, "/completions")

    @property
    def tokenize_url(self) -> str:
        """vLLM's and SGLang's ``/tokenize``, beside ``/v1``."""
        parts = urlsplit(self.base_url)
        path = parts.path.rstrip("/").removesuffix("/v1")
        return urlunsplit(parts._replace(path=path + "/tokenize"))


def completions_record(
    body: bytes, latency: float, cut: bool, length: int | None, limit: int
) -> dict[str, Any]:
    """The stored record of a 2xx completions answer: the raw text as the server sent it."""
    if cut:
        return oversized_record(limit, latency, length)
    response = json_object(body)
    choices = response.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(first, dict) or not isinstance(first.get("text"), str):
        raise Failure("silent", "the server answered 200 without a completion's text")
    usage = response.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return {
        "result": first["text"],
        "tool_call_ids": [],
        "latency": round(latency, 4),
        "input_tokens": token_count(usage.get("prompt_tokens")),
        "output_tokens": token_count(usage.get("completion_tokens")),
        "reasoning": None,
        "finish_reason": text_of(first.get("finish_reason")),
    }


class CompletionsModel(OpenAIChatModel):
    read_answer = staticmethod(completions_record)

    def __init__(
        self,
        settings: EndpointSettings,
        scoring: ScoringOptions,
        texts: ProtocolTexts,
        family: Family,
        budget: PromptBudget | None,
        cache: ResponseCache | None = None,
        hook: Any = None,
    ) -> None:
        """``budget``: the token counter and context window; None: the server counts (its
        ``/tokenize``) and its ``/models`` listing gives the window."""
        super().__init__(settings, scoring, texts, cache, hook)
        self.family = family
        self._budget = budget
        self._budget_lock = threading.Lock()
        self.requests = _Requests(self)  # type: ignore[assignment]

    def _replica(self, base_url: str | None) -> Replica:
        chat = super()._replica(base_url)
        return CompletionsReplica(chat.base_url, chat.headers)

    def metadata(self) -> dict[str, Any]:
        data = super().metadata()
        # the route and the family: a baseline of another route or family is refused
        data["wire_format"] = f"{WIRE_FORMAT}:{self.family.name}"
        data["handler"] = {
            "family": self.family.name,
            "handlers": list(self.family.handlers),
            "tokens": self._budget.source if self._budget else "the server's /tokenize",
        }
        return data

    def cache_identity(
        self, request: dict[str, Any], sample: int = 0, entry: str | None = None
    ) -> dict[str, Any]:
        identity = super().cache_identity(request, sample, entry)
        identity["route"] = f"{WIRE_FORMAT}:{self.family.name}"
        return identity

    # -- requests -----------------------------------------------------------------------------

    def first_messages(self, task: Task) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A single-turn entry's messages (the benchmark's system prompt first where the
        handler puts it there) and its functions with the language hints."""
        entry = task.entry
        docs = with_language_hints(entry.function_sources(), entry.language, self.texts)
        if entry.format_config:  # format sensitivity: the hint twice (reference quirk)
            docs = with_language_hints(docs, "python", self.texts)
        messages = [m.model_dump() for m in entry.question[0]]
        if self.family.system_prompt:
            prompt = system_prompt(docs, entry.prompt_format, self.texts)
            messages = insert_system_prompt(messages, prompt)
        return self.family.prepare_turn(messages), docs

    def build_request(self, task: Task) -> dict[str, Any]:
        messages, docs = self.first_messages(task)
        return self.body(self.family.render(messages, docs))

    def step_request(self, step: StepRequest) -> dict[str, Any]:
        """A conversation step: the history so far, the functions shown at its start (held-out
        functions arrive as a message, and the handler's prompt keeps the first ones)."""
        docs = with_language_hints(step.task.entry.function_sources(), "python", self.texts)
        return self.body(self.family.render(step.messages, docs))

    def body(self, prompt: str) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.settings.model,
            "temperature": self.settings.temperature,
            "prompt": prompt,
            "max_tokens": self.settings.max_tokens or self._max_tokens(prompt),
        }
        request.update(self.family.request_fields())
        if self.settings.seed is not None:
            request["seed"] = self.settings.seed
        request.update(self.settings.extra_body)
        return request

    def ping(self) -> bytes:
        ping = {"model": self.settings.model, "prompt": "ping", "max_tokens": 1}
        return json.dumps(ping).encode()

    # -- answers ------------------------------------------------------------------------------

    def generate(self, task: Task) -> Generation:
        record, cached = self._answer(self.build_request(task), task)
        fields = generation_fields(self._read(record))
        return Generation(id=task.entry.id, cached=cached, **fields)

    def step(self, step: StepRequest) -> StepReply:
        record, cached = self._answer(self.step_request(step), step.task, conversation=True)
        record = self._read(record)
        echo = record.pop("echo", None)
        return StepReply(cached=cached, echo=echo, **generation_fields(record))

    def _read(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record as the handler reads its raw text: the answer it stores, its reasoning,
        and the message it adds to the history; a note or refusal stays as it is."""
        text = record.get("result")
        if record.get("finish_reason") in _UNREAD or not isinstance(text, str):
            return record
        # An answer the handler could not read (a call it would evaluate and fail on) is
        # decoded as the raw text, and fails there.
        try:
            answer = self.family.read(text)
        except DecodeError:  # past the bounds on output: the text is decoded whole, and fails
            return {**record, "echo": [{"role": "assistant", "content": text}]}
        reasoning = answer.reasoning or None
        return {**record, "result": answer.text, "reasoning": reasoning, "echo": [answer.echo]}

    # -- the prompt's tokens ------------------------------------------------------------------

    def _max_tokens(self, prompt: str) -> int:
        if self._budget is not None:
            return self._budget.max_tokens(prompt)
        return max_tokens_for(self._server_count(prompt), self._server_context())

    def _server_count(self, prompt: str) -> int:
        replica = self.replicas[0]
        assert isinstance(replica, CompletionsReplica)
        payload = {"model": self.settings.model, "prompt": prompt, "add_special_tokens": False}
        data = self._get_json("POST", replica.tokenize_url, replica, payload)
        count = token_count(data.get("count"))
        if count is None and isinstance(data.get("tokens"), list):
            count = len(data["tokens"])
        if count is None:
            raise InferenceError(
                f"{replica.tokenize_url} gave no token count; give the checkpoint's tokenizer "
                "with --bfcl-tokenizer PATH"
            )
        return count

    def _server_context(self) -> int:
        with self._budget_lock:
            known = getattr(self, "_context", None)
            if known is not None:
                return int(known)
            replica = self.replicas[0]
            data = self._get_json("GET", replica.models_url, replica, None)
            listed = data.get("data")
            listed = listed if isinstance(listed, list) else []
            served = [m for m in listed if isinstance(m, dict) and m.get("id") == self.name]
            window = token_count((served or [{}])[0].get("max_model_len"))
            if not window:
                raise InferenceError(
                    f"{replica.models_url} does not say the model's context window "
                    "(max_model_len); give the checkpoint's folder with --bfcl-tokenizer PATH"
                )
            self._context = window
            return window

    def _get_json(
        self, method: str, url: str, replica: Replica, payload: dict[str, Any] | None
    ) -> dict[str, Any]:
        self.ready()  # a server started on demand counts tokens once it runs
        content = json.dumps(payload).encode() if payload is not None else None
        try:
            response = self._http.request(method, url, content=content, headers=replica.headers)
        except Exception as exc:  # the transport's errors, one line
            raise InferenceError(f"{url} did not answer: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 300:
            raise InferenceError(
                f"{url} answered {response.status_code}; give the checkpoint's tokenizer with "
                "--bfcl-tokenizer PATH"
            )
        try:
            data = json.loads(response.content)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise InferenceError(f"{url} answered with something other than a JSON object")
        return data


# finish reasons whose record holds a note, not the model's text
_UNREAD = ("response_too_large", "context_length_exceeded", "prompt_filtered")


class _Requests:
    """What the chat client's probe and replica checks ask of a request builder."""

    def __init__(self, model: CompletionsModel) -> None:
        self.model = model

    def for_task(self, task: Task) -> dict[str, Any]:
        return self.model.build_request(task)

    def for_step(self, step: StepRequest) -> dict[str, Any]:
        return self.model.step_request(step)

    def ping(self) -> bytes:
        return self.model.ping()
