"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, llama.cpp, a gateway), in
function-calling or prompting mode: the cache, retries, failover, the server-down rule, the
probe. Requests are built in :mod:`.endpoint_request`, failures classified in
:mod:`.endpoint_errors`, answers read in :mod:`.endpoint_response`, each endpoint probed in
:mod:`.endpoint_probe`, rate limits waited out in :mod:`.rate_limit`.

Requests go out as plain JSON on a bounded HTTP client (:mod:`pytest_bfcl.web.transport`):
``--bfcl-timeout`` is a deadline for the whole request, and an answer is read up to
``--bfcl-max-response-bytes``. Server trouble (429, 5xx, timeouts, dropped connections, a 200
without a model message) is retried with exponential back-off and jitter, then an
infrastructure error, never cached. A server that answers nothing, refuses connections, or
rejects every request (401/403/404) stops the session once. A malformed or oversized answer is
the model's output, scored like any other; so is a request refused as longer than the model's
context window (as the leaderboard scores it), not cached.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.decode.reasoning import apply_reasoning_mode
from pytest_bfcl.errors import SetupError
from pytest_bfcl.models.base import Generation, StepReply, StepRequest, Task
from pytest_bfcl.models.cache import ResponseCache, cache_key
from pytest_bfcl.models.endpoint_errors import (
    ERROR_BODY_BYTES,
    NETWORK_ERRORS,
    Failure,
    InferenceError,
    ServerDown,
    Unreachable,
    error_text,
    read_capped,
    retry_after_header,
    status_failure,
    transport_failure,
)
from pytest_bfcl.models.endpoint_probe import PROBE_BODY_BYTES, probe_endpoint
from pytest_bfcl.models.endpoint_request import (
    EndpointSettings,
    RequestBuilder,
    conversation_id,
    request_headers,
    resolved_base_url,
)
from pytest_bfcl.models.endpoint_response import (
    answer_record,
    context_record,
    generation_fields,
    masked_record,
)
from pytest_bfcl.models.leaderboard_wire import echo_of_record
from pytest_bfcl.options.combinations import credentials_problem
from pytest_bfcl.redact import url_credentials
from pytest_bfcl.routing.affinity import prefix_group
from pytest_bfcl.routing.balancer import PROBE_TIMEOUT as REPLICA_PROBE_TIMEOUT
from pytest_bfcl.routing.balancer import Balancer, Probe, Replica
from pytest_bfcl.routing.rate_limit import RateLimitWatch, retry_delay
from pytest_bfcl.scoring import CONTEXT_EXCEEDED, PROMPT_FILTERED, ScoringOptions
from pytest_bfcl.web.transport import (
    Cancel,
    bounded_client,
    cancellable,
    deadline,
    detach_cancel,
    httpx,
)

__all__ = ["EndpointSettings", "InferenceError", "OpenAIChatModel", "ServerDown"]

WIRE_FORMAT = "chat-completions"  # part of a baseline's stamp (a Responses run differs)
PROBE_TIMEOUT = 15.0  # seconds for the probe before generation (it needs no generation)


class OpenAIChatModel:
    concurrent = True  # worth generating many entries at once
    # The server counts as down when this many attempts in a row failed without an answer
    # (timeouts, dropped connections, 5xx) AND nothing answered for as long as one entry's
    # back-off schedule: with requests in flight, a dead or stalled server is recognised after
    # about one --bfcl-timeout, not retries x timeout x waves of entries.
    DOWN_AFTER = 3
    read_answer = staticmethod(answer_record)  # the record of a 2xx answer (wire format's own)

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
        self.requests = RequestBuilder(settings, scoring, texts)
        urls = settings.base_urls or (None,)
        # Several base URLs are replicas of one server: requests go where the wait is least,
        # and failing replicas leave the rotation (:mod:`pytest_bfcl.routing.balancer`).
        self._balancer = Balancer([self._replica(url) for url in urls], probe=self._alive)
        connect = min(settings.timeout, 10.0)
        self._http = bounded_client(
            timeout=httpx.Timeout(settings.timeout, connect=connect),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
            follow_redirects=False,
        )
        self._lock = threading.Lock()
        self._silent_failures = 0  # failed attempts in a row without any answer (for messages)
        self._rate_limits = RateLimitWatch()
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
            "wire_format": WIRE_FORMAT,
            "served_model": s.model,
            "base_urls": list(s.base_urls),
            "sampling": {"temperature": s.temperature, "max_tokens": s.max_tokens, "seed": s.seed},
            "extra_body": dict(s.extra_body),
            "history_echo": s.history_echo,
            "identity": s.identity,
        }

    # -- requests -----------------------------------------------------------------------------

    def build_request(self, task: Task) -> dict[str, Any]:
        return self.requests.for_task(task)

    def step(self, step: StepRequest) -> StepReply:
        record, cached = self._answer(self.requests.for_step(step), step.task, conversation=True)
        record = apply_reasoning_mode(record, self.scoring.reasoning)
        echo = echo_of_record(record, self.scoring.mode, self.settings.history_echo)
        return StepReply(cached=cached, echo=echo, **record)

    def cache_identity(
        self, request: dict[str, Any], sample: int = 0, entry: str | None = None
    ) -> dict[str, Any]:
        """What the cache key is taken from: an answer is a draw per entry and per repeated
        sample (entries sending the same request, as multi-turn variants do, never share one)."""
        identity: dict[str, Any] = {"identity": self.settings.identity, "mode": self.scoring.mode}
        if entry is not None:
            identity["entry"] = entry
        if sample:
            identity["sample"] = sample
        return {**identity, "request": request}

    def generate(self, task: Task) -> Generation:
        record, cached = self._answer(self.build_request(task), task)
        record = apply_reasoning_mode(record, self.scoring.reasoning)
        return Generation(id=task.entry.id, cached=cached, **generation_fields(record))

    def _answer(
        self, request: dict[str, Any], task: Task, conversation: bool = False
    ) -> tuple[dict[str, Any], bool]:
        """The response record for a request, from the cache when it has it. A project's
        transforms apply before the cache key is taken and before the record is stored.
        A repeated sample with a sampling seed sends seed + sample: the same seed would make
        every sample the same answer. A step of a ``conversation`` is named (its replica,
        the session header), outside the request and its cache key."""
        session = conversation_id(task) if conversation else None
        if task.sample and isinstance(request.get("seed"), int):
            request = {**request, "seed": request["seed"] + task.sample}
        if self.hook is not None:
            self.hook.pytest_bfcl_transform_request(request=request, model=self.name)
        if self.cache is None:
            return masked_record(self._transformed(self._complete(request, session))), False
        key = cache_key(self.cache_identity(request, task.sample, task.entry.id))
        record = self.cache.get(key)
        if record is not None:
            masked = masked_record(record)
            if masked != record:  # stored before keys were masked in answers: stored again
                self.cache.put(key, masked)
            return masked, True
        record = masked_record(self._transformed(self._complete(request, session)))
        # A context or content-filter refusal is the server's limit, not an answer: a rerun on
        # a server with a longer window or another policy asks again.
        if record.get("finish_reason") not in (CONTEXT_EXCEEDED, PROMPT_FILTERED):
            self.cache.put(key, record)
        return record, False

    def _transformed(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.hook is not None:
            self.hook.pytest_bfcl_transform_response(record=record, model=self.name)
        return record

    # -- sending ------------------------------------------------------------------------------

    def ready(self) -> None:
        """Make sure the servers that requests go to can take them, before anything is sent
        (servers the session starts on demand start here); nothing for a given endpoint."""

    def _complete(self, request: dict[str, Any], session: str | None = None) -> dict[str, Any]:
        self.ready()
        # The plain JSON goes straight to the endpoint and the answer is read as bytes: the
        # SDK's typed ``create`` re-walks every message and tool and builds models of the
        # response, which costs more CPU than the rest of a conversation step.
        # ASCII JSON: a history holding a model's lone surrogates still goes out as valid JSON.
        payload = json.dumps(request).encode("ascii")
        name = self.settings.session_header
        extra = {name: session} if session and name else None  # a router keeps it together
        group = (lambda: prefix_group(request)) if session and len(self.replicas) > 1 else None
        # Each replica gets a try before the retries run out: one that has just died costs
        # its in-flight requests one attempt each, not their whole budget.
        attempts = self.settings.retries + len(self.replicas)
        last: Failure | None = None
        replica: Replica | None = None
        backoffs = tried = 0
        entry_started = time.monotonic()
        spared = False  # one cancelled attempt (a replica taken out under it) is not counted
        while tried < attempts:
            handle = Cancel()
            replica = self._pick_replica(replica, handle, session, group)
            started = time.perf_counter()
            try:
                with cancellable(handle):
                    body, cut, length = self._post(replica, payload, extra)
                latency = time.perf_counter() - started
                record = self.read_answer(
                    body, latency, cut, length, self.settings.max_response_bytes
                )
            except Failure as failure:
                if failure.kind in ("context", "filtered"):  # the server is there, the model fails
                    latency = time.perf_counter() - started
                    self._note_success(replica, handle, latency)
                    return context_record(str(failure), latency, failure.kind)
                last = failure
                if handle.cancelled:
                    last = Failure(
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
            elif last.kind != "busy" or not self._rate_limits.entry_may_wait(entry_started):
                tried += 1
            if tried < attempts and not self._fails_over(last, replica):
                time.sleep(self._delay(backoffs, last))
                backoffs += 1
        assert last is not None
        raise InferenceError(f"no usable answer after {attempts} attempts: {last}")

    def _fails_over(self, failure: Failure, replica: Replica) -> bool:
        """Whether the next attempt goes to another replica at once, without backing off: the
        failure was this replica's (no answer, refused, cancelled) and another is in rotation.
        A 429 waits as the server asks, whichever replica sent it."""
        return failure.kind in ("silent", "fatal", "cancelled") and self._balancer.has_other_usable(
            replica
        )

    def _pick_replica(
        self,
        avoid: Replica | None,
        handle: Cancel,
        session: str | None,
        group: Callable[[], str] | None,
    ) -> Replica:
        with self._lock:
            if self.down_reason:
                raise ServerDown(self.down_reason)
        try:
            return self._balancer.acquire(avoid, handle, session, group)
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
                    content=self.requests.ping(),
                    headers=replica.headers,
                    timeout=REPLICA_PROBE_TIMEOUT,
                ) as response,
            ):
                read_capped(response, PROBE_BODY_BYTES)
                return Probe(response.status_code < 500)
        except NETWORK_ERRORS as exc:
            failure = transport_failure(exc, replica.chat_url, REPLICA_PROBE_TIMEOUT)
            return Probe(False, str(failure) if failure.kind == "fatal" else None)

    def _post(
        self, endpoint: Replica, payload: bytes, extra: dict[str, str] | None = None
    ) -> tuple[bytes, bool, int | None]:
        """The body of a 2xx answer (cut at the size limit), whether it was cut, and its
        declared length; any other outcome raises a :class:`Failure`."""
        url = endpoint.chat_url
        headers = {**endpoint.headers, **extra} if extra else endpoint.headers
        try:
            with (
                deadline(self.settings.timeout),
                self._http.stream("POST", url, content=payload, headers=headers) as response,
            ):
                if not 200 <= response.status_code < 300:
                    text, _ = read_capped(response, ERROR_BODY_BYTES)
                    detach_cancel()
                    raise status_failure(
                        response.status_code,
                        url,
                        error_text(text),
                        retry_after_header(response),
                        text,
                        response.headers.get("location"),
                    )
                body, cut = read_capped(response, self.settings.max_response_bytes)
                detach_cancel()  # answered: a cancel must not reach the pooled connection now
                length = response.headers.get("content-length", "")
                return body, cut, int(length) if length.isdigit() else None
        except NETWORK_ERRORS as exc:
            raise transport_failure(exc, url, self.settings.timeout) from None

    def _delay(self, attempt: int, failure: Failure) -> float:
        left = self._rate_limits.left()
        return retry_delay(self.settings.backoff, attempt, failure.retry_after, left)

    # -- is the server down? --------------------------------------------------------------------

    def _down_window(self) -> float:
        """How long without any answer makes a server down: one entry's back-off schedule."""
        return min(self.settings.backoff * (2**self.settings.retries - 1), 60.0)

    def _note_success(self, replica: Replica, handle: Cancel, latency: float) -> None:
        self._balancer.release(replica, handle, latency=latency)
        self._rate_limits.answered()
        with self._lock:
            self._silent_failures = 0

    def _note_failure(self, failure: Failure, handle: Cancel | None = None) -> None:
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
            elif failure.kind == "busy" and (limited := self._rate_limits.limited(failure)):
                self.down_reason = self.down_reason or limited

    def dead_replica(self, base_url: str) -> str | None:
        """Why the server process behind ``base_url`` is gone, when the plugin started it and
        it died; ``None`` otherwise (a server the plugin did not start is judged by its
        answers)."""
        return None

    def _note_silent(self, failure: Failure) -> None:
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
        unreachable: list[tuple[Replica, Unreachable]] = []
        for replica in self.replicas:
            try:
                ping = self.requests.ping
                probe_endpoint(self._http, replica, self.settings.model, ping, PROBE_TIMEOUT)
            except Unreachable as problem:
                unreachable.append((replica, problem))
        if unreachable and len(unreachable) == len(self.replicas):
            raise SetupError("; ".join(dict.fromkeys(str(p) for _, p in unreachable)))
        for down, why in unreachable:
            self._balancer.eject(down, f"it did not answer before the run: {why}")
