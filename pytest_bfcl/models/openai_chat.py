"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, llama.cpp, a gateway), in
function-calling or prompting mode.

Requests go out as plain JSON on a bounded HTTP client (:mod:`pytest_bfcl.web.transport`):
``--bfcl-timeout`` is a deadline for the whole request (connect, send, every byte of the
answer), and an answer is read up to ``--bfcl-max-response-bytes``. Server trouble (429, 5xx,
timeouts, dropped connections) is retried with exponential back-off and jitter; when retries run
out the entry is an infrastructure error, not a model failure; so is a 200 that holds no model
message (an error object, no choices, no message), which is never cached. A server that answers
nothing at all, refuses connections, or rejects every request (401/403/404) stops the session
once. A malformed answer (bad JSON arguments, odd shapes of the message, unknown tool, an
oversized body) is stored as the model's output and scored like any other; a request refused as
longer than the model's context window is the model's failure too (as the leaderboard scores
it), not cached.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import socket
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.decode.reasoning import apply_reasoning_mode
from pytest_bfcl.errors import InfrastructureError, RunStopped, SetupError
from pytest_bfcl.models.balancer import PROBE_TIMEOUT as REPLICA_PROBE_TIMEOUT
from pytest_bfcl.models.balancer import Balancer, Probe, Replica
from pytest_bfcl.models.base import Generation, NotGenerated, StepReply, StepRequest, Task
from pytest_bfcl.models.cache import ResponseCache, cache_key
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    system_prompt,
    to_openai_tools,
    with_language_hints,
)
from pytest_bfcl.redact import url_credentials
from pytest_bfcl.scoring import CONTEXT_EXCEEDED, TRUNCATED, ScoringOptions
from pytest_bfcl.settings import credentials_problem
from pytest_bfcl.web.transport import (
    Cancel,
    bounded_client,
    cancellable,
    deadline,
    detach_cancel,
    httpx,
)

# Answered with one request (the executable categories' entries are single-turn too).
_SINGLE_TURN_KINDS = (
    Kind.AST,
    Kind.RELEVANCE,
    Kind.IRRELEVANCE,
    Kind.FORMAT_SENSITIVITY,
    Kind.EXECUTABLE,
)

# The largest answer read from a server. A chat completion with tool calls is a few kB; even a
# long reasoning trace stays under a megabyte. 8 MiB leaves ample room while a hostile or broken
# server sending hundreds of megabytes cannot fill memory and the cache.
MAX_RESPONSE_BYTES = 8 * 2**20
ERROR_BODY_BYTES = 64 * 1024  # enough of an error answer to quote its message
PROBE_TIMEOUT = 15.0  # seconds for the probe before generation (it needs no generation)
PROBE_BODY_BYTES = 4 * 2**20  # a /models listing (OpenAI's is about 10 kB)
_MAX_TOKENS = 10**12  # a token count beyond this is not a count
# How servers word a request longer than the model's context window (OpenAI, vLLM, SGLang,
# llama.cpp, TGI, gateways), answered with one of these statuses.
_CONTEXT_STATUSES = (400, 413, 422)
_CONTEXT_WORDS = re.compile(
    r"context[ _-]?(length|window|size)|maximum model length|max_model_len"
    r"|prompt is too long|input is too long|too many (input |prompt )?tokens"
    r"|tokens \+ `?max_new_tokens`? must be <=",
    re.IGNORECASE,
)


# Where requests go and what they carry, read from the environment variables the OpenAI SDK
# reads, without importing the SDK: its import took 0.3-0.4 s of every run's start.
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
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    timeout: float = 120.0  # deadline of one request, body included
    retries: int = 4
    backoff: float = 1.0  # first retry delay in seconds; doubles each time, with jitter
    identity: str = ""  # extra cache identity (serving flags, checkpoint hash)
    max_response_bytes: int = MAX_RESPONSE_BYTES

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
        )


class InferenceError(InfrastructureError):
    """The server did not answer usably after the allowed retries (infrastructure)."""


class ServerDown(InferenceError, RunStopped):
    """The server is unreachable; remaining entries are not attempted."""


class _Unreachable(SetupError):
    """The probe before the run got no answer from a replica."""


class _Failure(Exception):
    """One failed attempt, with how it counts.

    - ``silent``: no usable answer (timeout, dropped connection, 5xx, a body that is not a
      completion): retried; evidence that the server is down;
    - ``fatal``: refused connection, unknown host, 401/403/404: no retry will change it soon;
      a replica that answers so twice in a row is out of rotation (for good when ``lasting``:
      401/403/404 and an unknown host; a refused connection is probed again);
    - ``busy``: 429: retried after the server's delay; the server is alive;
    - ``refused``: any other 4xx: the request itself is refused; not retried;
    - ``cancelled``: the balancer took a stalled replica out of rotation mid-request; retried
      on another replica at once;
    - ``context``: a 4xx saying the request is longer than the model's context window: the
      model's failure (the leaderboard scores it so), not retried, not cached.
    """

    def __init__(
        self, kind: str, message: str, retry_after: float | None = None, lasting: bool = False
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.lasting = lasting
        self.endpoint: Replica | None = None


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _error_text(body: bytes) -> str:
    """The short message of an error answer: OpenAI's ``error.message``, a ``detail`` or
    ``message`` field, or the start of the body."""
    try:
        payload = json.loads(body)
    except ValueError:
        return _one_line(body.decode("utf-8", "replace"))
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        for candidate in (error, payload.get("detail"), payload.get("message")):
            if isinstance(candidate, str) and candidate:
                return _one_line(candidate)
    return _one_line(body.decode("utf-8", "replace"))


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _read_capped(response: Any, limit: int) -> tuple[bytes, bool]:
    """The (decoded) body up to ``limit`` bytes, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            chunks.append(chunk[: len(chunk) - (size - limit)])
            return b"".join(chunks), True
        chunks.append(chunk)
    return b"".join(chunks), False


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _transport_failure(exc: Exception, url: str, timeout: float) -> _Failure:
    """What a transport exception means for the run, in one line."""
    if isinstance(exc, httpx.TimeoutException):
        return _Failure("silent", f"no complete answer within {timeout:g} s from {url}")
    if isinstance(exc, httpx.ConnectError):
        if _cause(exc, ConnectionRefusedError):
            return _Failure(
                "fatal",
                f"connection refused at {url}: nothing listens there "
                "(start the server, or fix --bfcl-base-url)",
            )
        lookup = _cause(exc, socket.gaierror)
        if lookup is not None and getattr(lookup, "errno", None) != socket.EAI_AGAIN:
            return _Failure(
                "fatal",
                f"cannot resolve the host of {url} (fix --bfcl-base-url): {exc}",
                lasting=True,
            )
    return _Failure("silent", f"the connection to {url} failed: {_one_line(str(exc)) or exc!r}")


def _status_failure(
    status: int, url: str, text: str, retry_after: float | None, body: bytes = b""
) -> _Failure:
    where = f"HTTP {status} from {url}" + (f": {text}" if text else "")
    if status in _CONTEXT_STATUSES and _CONTEXT_WORDS.search(
        body.decode("utf-8", "replace") or text
    ):
        return _Failure("context", text or where)
    if status in (401, 403):
        return _Failure(
            "fatal",
            f"{where} (the server refuses the API key: set it in $OPENAI_API_KEY, or name "
            "the variable that holds it with --bfcl-api-key-env)",
            lasting=True,
        )
    if status == 404:
        return _Failure(
            "fatal",
            f"{where} (check --bfcl-base-url, which usually ends in /v1, and that the "
            "server serves the model named by --bfcl-model)",
            lasting=True,
        )
    if status == 429:
        return _Failure("busy", where, retry_after)
    if status in (408, 409) or status >= 500:
        return _Failure("silent", where, retry_after)
    return _Failure("refused", where)


def _token_count(value: Any) -> int | None:
    """A usage count as the server reported it, or None when it is not a count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < _MAX_TOKENS else None
    if isinstance(value, float) and value.is_integer() and 0 <= value < _MAX_TOKENS:
        return int(value)
    return None


def _text(value: Any) -> str | None:
    """A text field as text: JSON of anything that is not a string (never a call list)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=True)


def _call_name(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=True)


class OpenAIChatModel:
    concurrent = True  # worth generating many entries at once
    # The server counts as down when this many attempts in a row failed without an answer
    # (timeouts, dropped connections, 5xx) AND nothing answered for as long as one entry's
    # back-off schedule: with requests in flight, a dead or stalled server is recognised after
    # about one --bfcl-timeout, not retries x timeout x waves of entries.
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
        # Several base URLs are replicas of one server: requests go where the wait is least,
        # and failing replicas leave the rotation (:mod:`pytest_bfcl.models.balancer`).
        self._balancer = Balancer([self._replica(url) for url in urls], probe=self._alive)
        connect = min(settings.timeout, 10.0)
        self._http = bounded_client(
            timeout=httpx.Timeout(settings.timeout, connect=connect),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
            follow_redirects=False,
        )
        self._lock = threading.Lock()
        self._silent_failures = 0  # failed attempts in a row without any answer (for messages)
        self.down_reason: str | None = None

    def close(self) -> None:
        """Close the connection pool: a process may build many models (test sessions,
        embedded use), and idle keep-alive connections would pile up as open files."""
        self._balancer.close()
        self._http.close()

    @property
    def replicas(self) -> list[Replica]:
        return self._balancer.replicas

    def replica_stats(self) -> list[dict[str, Any]]:
        """Requests, answers, errors, latencies and ejections per replica (for the report);
        a replica whose process died since its last request is reported given up, with why."""
        for replica in self.replicas:
            if replica.state != "given up" and (gone := self.dead_replica(replica.base_url)):
                self._balancer.give_up(replica, gone)
        return self._balancer.stats()

    def out_of_rotation(self) -> dict[str, str]:
        return {r.base_url: r.reason or "" for r in self.replicas if r.state == "ejected"}

    def take_out_of_rotation(self, reasons: dict[str, str]) -> None:
        for replica in self.replicas:
            if replica.base_url in reasons:
                self._balancer.eject(replica, reasons[replica.base_url])

    def _replica(self, base_url: str | None) -> Replica:
        key = os.environ.get(self.settings.api_key_env) or "EMPTY"  # local servers need none
        url = resolved_base_url(base_url)
        masked = url_credentials(url)
        if masked is not None:  # $OPENAI_BASE_URL (the option's value is checked earlier)
            where = "--bfcl-base-url" if base_url else "$OPENAI_BASE_URL"
            raise SetupError(credentials_problem(masked, where))
        return Replica(url, request_headers(key))

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
        docs = with_language_hints(entry.function_sources(), entry.language, self.texts)
        if entry.format_config:  # format sensitivity: the hint is applied twice (reference quirk)
            docs = with_language_hints(docs, "python", self.texts)
        messages = [m.model_dump() for m in entry.question[0]]
        if self.scoring.mode != "fc":
            prompt = system_prompt(docs, entry.prompt_format, self.texts)
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
        record, cached = self._answer(self.build_step_request(step), step.task.sample)
        record = apply_reasoning_mode(record, self.scoring.reasoning)
        return StepReply(cached=cached, **record)

    def cache_identity(self, request: dict[str, Any], sample: int = 0) -> dict[str, Any]:
        """What the cache key is taken from. Each repeated sample of an entry is a request of
        its own (the first keeps the key a single-sample run has)."""
        identity: dict[str, Any] = {"identity": self.settings.identity, "mode": self.scoring.mode}
        if sample:
            identity["sample"] = sample
        return {**identity, "request": request}

    def generate(self, task: Task) -> Generation:
        record, cached = self._answer(self.build_request(task), task.sample)
        record = apply_reasoning_mode(record, self.scoring.reasoning)
        return Generation(id=task.entry.id, cached=cached, **_generation_fields(record))

    def _answer(self, request: dict[str, Any], sample: int = 0) -> tuple[dict[str, Any], bool]:
        """The response record for a request, from the cache when it has it. A project's
        transforms apply before the cache key is taken and before the record is stored.
        A repeated sample with a sampling seed sends seed + sample: the same seed would make
        every sample the same answer."""
        if sample and isinstance(request.get("seed"), int):
            request = {**request, "seed": request["seed"] + sample}
        if self.hook is not None:
            self.hook.pytest_bfcl_transform_request(request=request, model=self.name)
        if self.cache is None:
            return self._transformed(self._complete(request)), False
        key = cache_key(self.cache_identity(request, sample))
        record = self.cache.get(key)
        if record is not None:
            return record, True
        record = self._transformed(self._complete(request))
        # A context refusal is the server's limit, not an answer: a rerun on a server with a
        # longer window asks again.
        if record.get("finish_reason") != CONTEXT_EXCEEDED:
            self.cache.put(key, record)
        return record, False

    def _transformed(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.hook is not None:
            self.hook.pytest_bfcl_transform_response(record=record, model=self.name)
        return record

    # -- sending ------------------------------------------------------------------------------

    def _complete(self, request: dict[str, Any]) -> dict[str, Any]:
        # The plain JSON goes straight to the endpoint and the answer is read as bytes: the
        # SDK's typed ``create`` re-walks every message and tool and builds models of the
        # response, which costs more CPU than the rest of a conversation step.
        # ASCII JSON: a history holding a model's lone surrogates still goes out as valid JSON.
        payload = json.dumps(request).encode("ascii")
        # Each replica gets a try before the retries run out: one that has just died costs
        # its in-flight requests one attempt each, not their whole budget.
        attempts = self.settings.retries + len(self.replicas)
        last: _Failure | None = None
        replica: Replica | None = None
        backoffs = tried = 0
        spared = False  # one cancelled attempt (a replica taken out under it) is not counted
        while tried < attempts:
            handle = Cancel()
            replica = self._pick_replica(replica, handle)
            started = time.perf_counter()
            try:
                with cancellable(handle):
                    body, cut, length = self._post(replica, payload)
                record = self._record(body, time.perf_counter() - started, cut, length)
            except _Failure as failure:
                if failure.kind == "context":  # an answer: the server is there, the model fails
                    latency = time.perf_counter() - started
                    self._note_success(replica, handle, latency)
                    return self._context_record(str(failure), latency)
                last = failure
                if handle.cancelled:
                    last = _Failure(
                        "cancelled", f"{replica.base_url} was taken out of rotation: {failure}"
                    )
            except BaseException:
                self._balancer.release(replica, handle, failure="aborted")
                raise
            else:
                self._note_success(replica, handle, record["latency"])
                return record
            last.endpoint = replica
            self._note_failure(last, handle)
            if last.kind == "refused":
                raise InferenceError(f"the server refused the request: {last}")
            if self.down_reason:
                raise ServerDown(self.down_reason)
            if last.kind == "cancelled" and not spared:
                spared = True
            else:
                tried += 1
            if tried < attempts and not self._fails_over(last, replica):
                time.sleep(self._delay(backoffs, last))
                backoffs += 1
        assert last is not None
        raise InferenceError(f"no usable answer after {attempts} attempts: {last}")

    def _fails_over(self, failure: _Failure, replica: Replica) -> bool:
        """Whether the next attempt goes to another replica at once, without backing off: the
        failure was this replica's (no answer, refused, cancelled) and another is in rotation.
        A 429 waits as the server asks, whichever replica sent it."""
        return failure.kind in ("silent", "fatal", "cancelled") and self._balancer.has_other_usable(
            replica
        )

    def _pick_replica(self, avoid: Replica | None, handle: Cancel) -> Replica:
        with self._lock:
            if self.down_reason:
                raise ServerDown(self.down_reason)
        try:
            return self._balancer.acquire(avoid, handle)
        except LookupError:
            raise ServerDown(self.down_reason or "every replica is given up") from None

    def _alive(self, replica: Replica) -> Probe:
        """The balancer's probe of a replica out of rotation: does it answer a one-token
        request in time? (A server whose HTTP front still lists its models while its engine
        hangs does not.)"""
        gone = self.dead_replica(replica.base_url)
        if gone:
            return Probe(False, gone=gone)
        try:
            with (
                deadline(REPLICA_PROBE_TIMEOUT),
                self._http.stream(
                    "POST",
                    replica.chat_url,
                    content=self._ping,
                    headers=replica.headers,
                    timeout=REPLICA_PROBE_TIMEOUT,
                ) as response,
            ):
                _read_capped(response, PROBE_BODY_BYTES)
                return Probe(response.status_code < 500)
        except httpx.TransportError as exc:
            failure = _transport_failure(exc, replica.chat_url, REPLICA_PROBE_TIMEOUT)
            return Probe(False, str(failure) if failure.kind == "fatal" else None)

    @property
    def _ping(self) -> bytes:
        """The smallest chat request: one token."""
        ping = {
            "model": self.settings.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
        }
        return json.dumps(ping).encode()

    def _post(self, endpoint: Replica, payload: bytes) -> tuple[bytes, bool, int | None]:
        """The body of a 2xx answer (cut at the size limit), whether it was cut, and its
        declared length; any other outcome raises a :class:`_Failure`."""
        url = endpoint.chat_url
        try:
            with (
                deadline(self.settings.timeout),
                self._http.stream(
                    "POST", url, content=payload, headers=endpoint.headers
                ) as response,
            ):
                if not 200 <= response.status_code < 300:
                    text, _ = _read_capped(response, ERROR_BODY_BYTES)
                    detach_cancel()
                    raise _status_failure(
                        response.status_code, url, _error_text(text), _retry_after(response), text
                    )
                body, cut = _read_capped(response, self.settings.max_response_bytes)
                detach_cancel()  # answered: a cancel must not reach the pooled connection now
                length = response.headers.get("content-length", "")
                return body, cut, int(length) if length.isdigit() else None
        except httpx.TransportError as exc:
            raise _transport_failure(exc, url, self.settings.timeout) from None

    def _delay(self, attempt: int, failure: _Failure) -> float:
        delay = self.settings.backoff * 2**attempt
        if failure.retry_after is not None:
            delay = max(delay, failure.retry_after)
        return min(delay, 60.0) * (0.5 + random.random() / 2)

    # -- is the server down? --------------------------------------------------------------------

    def _down_window(self) -> float:
        """How long without any answer makes a server down: one entry's back-off schedule."""
        return min(self.settings.backoff * (2**self.settings.retries - 1), 60.0)

    def _note_success(self, replica: Replica, handle: Cancel, latency: float) -> None:
        self._balancer.release(replica, handle, latency=latency)
        with self._lock:
            self._silent_failures = 0

    def _note_failure(self, failure: _Failure, handle: Cancel | None = None) -> None:
        """Tell the balancer, and count the failed attempt towards the server being down."""
        replica = failure.endpoint
        dead = None
        if replica is not None:
            self._balancer.release(
                replica, handle, failure=failure.kind, lasting=failure.lasting, message=str(failure)
            )
            dead = self.dead_replica(replica.base_url)
            if dead:  # its process is gone: known at once, no need to wait for more failures
                self._balancer.give_up(replica, dead)
        with self._lock:
            if failure.kind == "fatal" or dead:
                reasons = self._balancer.refused_everywhere()
                if reasons and not self.down_reason:
                    self.down_reason = f"the model server cannot be used: {reasons}"
            elif failure.kind == "silent":
                self._note_silent(failure)

    def dead_replica(self, base_url: str) -> str | None:
        """Why the server process behind ``base_url`` is gone, when the plugin started it and
        it died; ``None`` otherwise (a server the plugin did not start is judged by its
        answers)."""
        return None

    def _note_silent(self, failure: _Failure) -> None:
        """The server is down when no replica answers any more: each failed ``DOWN_AFTER``
        attempts in a row and has said nothing for one entry's back-off schedule (or refuses
        connections, or is given up)."""
        self._silent_failures += 1
        quiet = self._balancer.silent_everywhere(self.DOWN_AFTER, self._down_window())
        if quiet is not None and not self.down_reason:
            urls = ", ".join(r.base_url for r in self.replicas)
            self.down_reason = (
                f"the model server at {urls} is unreachable or failing: no answer for "
                f"{quiet:.0f} s, {self._silent_failures} attempts in a row failed "
                f"(last: {failure})"
            )

    # -- the probe ------------------------------------------------------------------------------

    def probe(self) -> None:
        """Check every endpoint before generation: it answers, accepts the key, and serves
        the model. Raises :class:`SetupError` with what failed, where, and the fix. Of
        several replicas, those that do not answer start out of rotation (probed again
        later), as long as one answers."""
        unreachable: list[tuple[Replica, _Unreachable]] = []
        for replica in self.replicas:
            try:
                self._probe(replica)
            except _Unreachable as problem:
                unreachable.append((replica, problem))
        if unreachable and len(unreachable) == len(self.replicas):
            raise SetupError("; ".join(dict.fromkeys(str(p) for _, p in unreachable)))
        for down, why in unreachable:
            self._balancer.eject(down, f"it did not answer before the run: {why}")

    def _probe(self, endpoint: Replica) -> None:
        status, body = self._probe_request("GET", endpoint.models_url, endpoint, None)
        if 200 <= status < 300:
            served = _served_models(body)
            if served and self.settings.model not in served:
                shown = ", ".join(served[:10]) + (", ..." if len(served) > 10 else "")
                raise SetupError(
                    f"the server at {endpoint.base_url} does not serve the model "
                    f"{self.settings.model!r} (--bfcl-model); it serves: {shown}"
                )
            return
        if status not in (401, 403):  # no /models route here: ask for one token instead
            status, body = self._probe_request("POST", endpoint.chat_url, endpoint, self._ping)
            if status not in (401, 403, 404):
                return  # it answers; anything else shows up in the entries
        failure = _status_failure(status, endpoint.base_url, _error_text(body), None)
        raise SetupError(f"the model server does not accept the run: {failure}")

    def _probe_request(
        self, method: str, url: str, endpoint: Replica, payload: bytes | None
    ) -> tuple[int, bytes]:
        try:
            with (
                deadline(PROBE_TIMEOUT),
                self._http.stream(
                    method, url, content=payload, headers=endpoint.headers, timeout=PROBE_TIMEOUT
                ) as response,
            ):
                body, _ = _read_capped(response, PROBE_BODY_BYTES)
                return response.status_code, body
        except httpx.TransportError as exc:
            failure = _transport_failure(exc, url, PROBE_TIMEOUT)
            raise _Unreachable(f"the model server does not answer: {failure}") from None

    # -- the record -----------------------------------------------------------------------------

    def _record(self, body: bytes, latency: float, cut: bool, length: int | None) -> dict[str, Any]:
        if cut:
            return self._oversized_record(latency, length)
        return self._completion_record(body, latency)

    def _oversized_record(self, latency: float, length: int | None) -> dict[str, Any]:
        """An answer over the size limit is the model's output, cut: a note in its place, and
        a finish reason that fails the entry (:mod:`pytest_bfcl.check.oversized`)."""
        limit = self.settings.max_response_bytes
        size = f"{length} bytes" if length else "length unknown"
        return {
            "result": f"[the answer was cut: larger than {limit} bytes ({size}); not scored]",
            "tool_call_ids": [],
            "latency": round(latency, 4),
            "input_tokens": None,
            "output_tokens": None,
            "reasoning": None,
            "finish_reason": TRUNCATED,
            "response_truncated": {"limit": limit, "length": length},
        }

    @staticmethod
    def _context_record(message: str, latency: float) -> dict[str, Any]:
        """A request refused as longer than the model's context window: the model's failure,
        with the server's words in place of an answer (:mod:`pytest_bfcl.check.oversized`)."""
        return {
            "result": f"[the request was refused: longer than the model's context window "
            f"({_one_line(message)}); not scored]",
            "tool_call_ids": [],
            "latency": round(latency, 4),
            "input_tokens": None,
            "output_tokens": None,
            "reasoning": None,
            "finish_reason": CONTEXT_EXCEEDED,
        }

    @staticmethod
    def _completion_record(body: bytes, latency: float) -> dict[str, Any]:
        """The stored record of a chat completion (the response's JSON, read as plain data;
        any field of an odd shape reads as absent or as text, never as calls)."""
        try:
            response = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise _Failure(
                "silent", f"the server answered with a body that is not JSON: {exc}"
            ) from None
        if not isinstance(response, dict):
            raise _Failure(
                "silent", f"the server answered with JSON that is not an object: {body[:80]!r}"
            )
        choices = response.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        choice = first if isinstance(first, dict) else {}
        message = choice.get("message")
        if not isinstance(message, dict):
            raise _Failure("silent", _not_a_completion(response, choices))
        tool_calls = message.get("tool_calls")
        calls = (
            [c for c in tool_calls if isinstance(c, dict)] if isinstance(tool_calls, list) else []
        )
        result: Any
        if calls:
            functions: list[Any] = [c.get("function") for c in calls]
            functions = [f if isinstance(f, dict) else {} for f in functions]
            result = [{_call_name(f.get("name")): f.get("arguments")} for f in functions]
        else:
            result = _text(message.get("content")) or ""
        usage = response.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return {
            "result": result,
            "tool_call_ids": [_text(c.get("id")) or "" for c in calls],
            "latency": round(latency, 4),
            "input_tokens": _token_count(usage.get("prompt_tokens")),
            "output_tokens": _token_count(usage.get("completion_tokens")),
            "reasoning": _text(message.get("reasoning_content") or message.get("reasoning")),
            "finish_reason": _text(choice.get("finish_reason")),
        }


def _not_a_completion(response: dict[str, Any], choices: Any) -> str:
    """Why a 200 answer holds no model message (gateways such as OpenRouter and LiteLLM
    answer an upstream failure with a 200 and an error object): infrastructure, retried,
    never cached or scored."""
    error = response.get("error")
    if error:
        text = _error_text(json.dumps({"error": error}, ensure_ascii=True).encode())
        return f"the server answered 200 with an error instead of a completion: {text}"
    if not isinstance(choices, list) or not choices:
        if choices is None:
            shown = "no choices"
        else:
            shown = "empty choices" if choices == [] else "choices that are not a list"
        return f"the server answered 200 with {shown} instead of a completion"
    return "the server answered 200 with a choice that holds no message"


def _served_models(body: bytes) -> list[str]:
    """The model names of a ``/models`` listing; empty when it cannot be read."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return []
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return []
    return [str(m["id"]) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _generation_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A record's fields for a :class:`Generation` (the cut answer's sizes stay in the stored
    record; its note and finish reason say the same)."""
    return {k: v for k, v in record.items() if k != "response_truncated"}
