"""A local OpenAI-compatible chat server for tests: it answers each BFCL question with the
oracle's answer (tool calls or text), multi-turn conversations step by step, and can inject
faults per entry: 429s, 500s, stalls, dropped connections, malformed tool calls, 200s without
a model message (an error object, no or empty choices, a null message), context-length
refusals, the gateways' shapes of :mod:`.gateway_faults`, and hostile behaviour: bytes
dripped slowly, huge bodies, 401/404 on everything, odd usage values and shapes. It lists its
models on GET /models. It listens on 127.0.0.1 only.

Like a server with a fixed batch, it can answer ``capacity`` requests at once and queue the
rest; it can stop answering after a number of requests (``stall_after``); with a
``prefix_cache`` (:mod:`.prefix_cache`) each request also pays the prefill of what it has not
seen. It records each chat request's entry and session header (``sessions``)."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.models.base import StepRequest, Task
from pytest_bfcl.models.oracle import OracleModel
from pytest_bfcl.testing.echoed_key import echo_key
from pytest_bfcl.testing.entry_match import (
    asked_conversation,
    asked_entry,
    conversation_position,
    named_as_shown,
    question_key,
)
from pytest_bfcl.testing.flood_answers import search_flood
from pytest_bfcl.testing.gateway_faults import GATEWAY_FAULTS
from pytest_bfcl.testing.loopback import LoopbackServer
from pytest_bfcl.testing.prefix_cache import PrefixCache
from pytest_bfcl.testing.request_body import read_body
from pytest_bfcl.testing.responses_wire import chat_body, response_of

# 200 answers that hold no model message, by fault name ("empty": choices [] is below).
_NOT_COMPLETIONS: dict[str, dict[str, Any]] = {
    "error200": {"error": {"message": "upstream provider returned 502", "code": 502}},
    "null_choices": {"id": "x", "object": "chat.completion", "choices": None},
    "no_choices": {"id": "x", "object": "chat.completion"},
    "null_message": {"choices": [{"index": 0, "message": None, "finish_reason": "stop"}]},
}
# vLLM's and OpenAI's answer to a request longer than the model's context window.
CONTEXT_REFUSAL = {
    "error": {
        "message": "This model's maximum context length is 4096 tokens. However, you "
        "requested 9000 tokens (8000 in the messages, 1000 in the completion).",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many clients connect at once (the default backlog is 5)
    daemon_threads = True


class FakeOpenAI(LoopbackServer):
    def __init__(
        self,
        dataset: Dataset,
        categories: list[str],
        latency: float = 0.0,
        mode: str = "fc",
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.mode = mode  # answer with tool calls (fc) or text (prompt)
        self.faults: dict[str, list[str]] = {}  # entry id -> faults to apply, one per request
        self.always: str | None = None  # a fault applied to every request (GET /models too)
        self.chat_fault: str | None = None  # a fault applied to every chat request only
        self.served_models = ["test-model", "bench-model"]  # listed on GET /models
        self.huge_bytes = 50_000_000  # size of a "huge" answer
        self.flood = (37, 199_000)  # a "flood" answer: this many calls of this many characters
        # a "search_flood" answer: this many web searches; "reasoning_flood": the usual answer
        # with this many characters of reasoning_content
        self.searches = 1000
        self.reasoning_chars = 3_000_000
        # an "echo_key" answer: the request's key and Authorization header in the answer and
        # its reasoning, with this text beside them
        self.echo_extra = ""
        self.patch: dict[str, Any] = {}  # fields merged into every completion (odd shapes)
        self.requests: Counter[str] = Counter()  # entry id -> requests received
        self.authorizations: list[str] = []  # the Authorization header of each chat request
        self.paths: list[str] = []  # the path (and query) of each chat request
        self.in_flight = self.max_in_flight = 0  # concurrent requests being answered
        self.spans: list[tuple[float, float]] = []  # time.time() each chat request came, left
        self.capacity: int | None = None  # requests answered at once; the rest wait their turn
        self._slots: threading.Semaphore | None = None
        self.stall_after: int | None = None  # chat requests answered before it stops answering
        self.prefix_cache: PrefixCache | None = None  # prefill paid for what it has not seen
        self.sessions: list[tuple[str, str | None]] = []  # entry id, X-Session-ID per request
        self.first_request: float | None = None  # time.time() of the first chat request
        self.last_answer: float | None = None  # ... and of the last answer sent
        self.lock = threading.Lock()
        # single-turn: by question; entries of several categories may share one, their
        # function sets tell them apart (:func:`.entry_match.asked_entry`)
        self.answers: dict[str, list[tuple[Entry, dict[str, Any]]]] = {}
        # the right calls named as the docs name them; each answer renames them as the
        # request's tools show them (:func:`named_as_shown`)
        fc, prompt = (
            OracleModel(ScoringOptions("fc", False)),
            OracleModel(ScoringOptions("prompt", False)),
        )
        self.oracles = {"fc": fc, "prompt": prompt}
        # multi-turn: entry by its first user message (one multi-turn category per server)
        self.conversations: dict[str, list[Task]] = {}
        signatures: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for category in categories:
            if CATEGORIES[category].kind in (Kind.MEMORY, Kind.WEB_SEARCH):
                continue  # no stored answers: only faults such as "flood" (chat_fault) serve them
            answers = dataset.answers(category)
            for entry in dataset.entries(category):
                task = Task(entry, answers.get(entry.id))
                if CATEGORIES[category].kind is Kind.MULTI_TURN:
                    key = entry.question[0][-1].content
                    self.conversations.setdefault(key, []).append(task)
                    names = tuple(doc.name for doc in entry.function)
                    signatures.setdefault((key, names), []).append(entry.id)
                    continue
                key = question_key([m.model_dump() for m in entry.question[0]])
                replies = {"fc": fc.generate(task).result, "prompt": prompt.generate(task).result}
                self.answers.setdefault(key, []).append((entry, replies))
        # Conversations whose first request is identical (same question, same functions): the
        # server cannot tell them apart, so it answers them with the first one's ground truth.
        self.ambiguous = {i for ids in signatures.values() if len(ids) > 1 for i in ids[1:]}
        self.server = _Server(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer_for(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        messages = body["messages"]
        key = question_key(messages)
        if key in self.answers:
            entry, replies = asked_entry(self.answers[key], body)
            return entry.id, {**replies, "fc": named_as_shown(replies["fc"], body)}
        first = next(m for m in messages if m.get("role") == "user")
        task = self._conversation(first["content"], body)
        turn, step = conversation_position(messages)
        replies = {
            mode: oracle.step(StepRequest(task, messages, [], mode, turn, step)).result
            for mode, oracle in self.oracles.items()
        }
        return task.entry.id, {**replies, "fc": named_as_shown(replies["fc"], body)}

    def _conversation(self, first_message: str, body: dict[str, Any]) -> Task:
        """Entries may share a first message; their turns and functions tell them apart."""
        return asked_conversation(self.conversations[first_message], body)

    def total_requests(self) -> int:
        return sum(self.requests.values())

    def wait_turn(self, prefill: float = 0.0) -> None:
        """The request's answer time: ``latency`` (and its ``prefill``), after waiting for a
        free slot when the server answers only ``capacity`` requests at once."""
        if not self.latency:
            return
        if self.capacity is None:
            time.sleep(self.latency + prefill)
            return
        with self.lock:
            if self._slots is None:
                self._slots = threading.Semaphore(self.capacity)
        with self._slots:
            time.sleep(self.latency + prefill)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep connections alive, as real servers do
            # Headers and body go out in separate writes; without TCP_NODELAY the body waits
            # for the client's delayed ACK (about 40 ms a response). Real servers set it too.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if fake.always and self._hostile(fake.always):
                    return None
                if fake.always in GATEWAY_FAULTS:  # a redirect, a broken encoding
                    return GATEWAY_FAULTS[fake.always](self)
                if self.path.rstrip("/").endswith("/models"):
                    listing = [{"id": name, "object": "model"} for name in fake.served_models]
                    return self._send(200, {"object": "list", "data": listing})
                # request counts, for a server in another process
                stats: dict[str, Any] = {
                    "requests": fake.total_requests(),
                    "max_in_flight": fake.max_in_flight,
                    "first_request": fake.first_request,
                    "last_answer": fake.last_answer,
                }
                if "spans" in self.path:  # when each request came and was answered
                    stats["spans"] = list(fake.spans)
                if "sessions" in self.path:  # each request's entry and session header
                    stats["sessions"] = list(fake.sessions)
                stats.update(fake.prefix_cache.counts() if fake.prefix_cache else {})
                return self._send(200, stats)

            def _hostile(self, fault: str) -> bool:
                """Answer with a server-level fault; False when ``fault`` is not one."""
                if fault in ("401", "404"):
                    self._send(int(fault), {"error": {"message": f"fault {fault}"}})
                elif fault == "drip":  # a valid start, then one byte a second, forever
                    self.send_response(200)
                    self.send_header("content-length", "1000000")
                    self.end_headers()
                    try:
                        while True:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(1.0)
                    except OSError:
                        pass
                    self.close_connection = True
                elif fault == "silent":  # accept the request, never answer
                    time.sleep(3600)
                else:
                    return False
                return True

            def do_POST(self) -> None:
                arrived = time.time()
                raw = read_body(self)
                if raw is None:
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._send(400, {"error": {"message": "the body is not JSON"}})
                responses = self.path.split("?")[0].rstrip("/").endswith("/responses")
                if responses:  # OpenAI's Responses API: the same answers, in its shape
                    body = chat_body(body)
                fault = fake.always or fake.chat_fault
                if fault and self._hostile(fault):
                    return None
                try:
                    entry_id, answer = fake.answer_for(body)
                except (KeyError, StopIteration):  # a question it has no answer for (agentic)
                    entry_id, answer = "unknown", {"fc": "", "prompt": ""}
                with fake.lock:
                    fake.authorizations.append(str(self.headers.get("Authorization")))
                    fake.sessions.append((entry_id, self.headers.get("X-Session-ID")))
                    fake.paths.append(self.path)
                    if fake.first_request is None:
                        fake.first_request = time.time()
                    stalled = (
                        fake.stall_after is not None and fake.total_requests() >= fake.stall_after
                    )
                    fake.requests[entry_id] += 1
                    pending = fake.faults.get(entry_id, [])
                    fault = pending.pop(0) if pending else fake.chat_fault
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                if stalled:  # it stopped answering: holds the connection, never answers
                    time.sleep(3600)
                fake.wait_turn(fake.prefix_cache.prefill_seconds(body) if fake.prefix_cache else 0)
                with fake.lock:
                    fake.in_flight -= 1
                    fake.spans.append((arrived, time.time()))
                gateway = fault if fault in GATEWAY_FAULTS else fake.always
                if gateway in GATEWAY_FAULTS:  # gateways', rate limiters' and providers' shapes
                    return GATEWAY_FAULTS[gateway](self)
                if fault == "429":
                    return self._send(
                        429, {"error": {"message": "slow down"}}, {"retry-after": "0"}
                    )
                if fault == "500":
                    return self._send(500, {"error": {"message": "boom"}})
                if fault == "hostile_error":  # words that would rewrite the log around them
                    words = "boom\x1b[2J\rPASSED all\n\u202edessap \ud800" + "x" * 100_000
                    return self._send(500, {"error": {"message": words}})
                if fault == "stall":
                    time.sleep(3)
                    return self._send(500, {"error": {"message": "late"}})
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                if fault in _NOT_COMPLETIONS:  # a gateway's 200 without a model message
                    return self._send(200, _NOT_COMPLETIONS[fault])
                if fault == "echo_auth":  # a refusal quoting the key, encoded and cut short
                    header = str(self.headers.get("Authorization"))
                    encoded = base64.b64encode(header.encode()).decode()
                    key = header.removeprefix("Bearer ")
                    text = f"refused credentials {encoded}; key {key[:14]}... is unknown"
                    return self._send(400, {"error": {"message": text}})
                if fault == "context":  # the history is longer than the model's window
                    return self._send(400, CONTEXT_REFUSAL)
                if fault == "huge" or fake.always == "huge":
                    return self._send_huge(body)
                if fault == "search_flood":
                    return self._send(200, search_flood(body, fake.searches))
                completion = fake.completion(body, answer[fake.mode], fake.mode, fault, fake.flood)
                if fake.prefix_cache is not None and completion["choices"]:
                    fake.prefix_cache.keep_answer(body, completion["choices"][0]["message"])
                if fault == "echo_key" and completion["choices"]:
                    echo_key(completion["choices"][0]["message"], self.headers, fake.echo_extra)
                if fault == "reasoning_flood" and completion["choices"]:
                    message = completion["choices"][0]["message"]
                    message["reasoning_content"] = "r" * fake.reasoning_chars
                completion.update(fake.patch)
                self._send(200, response_of(completion) if responses else completion)
                fake.last_answer = time.time()
                return None

            def _send_huge(self, body: dict[str, Any]) -> None:
                """A valid completion whose text is ``huge_bytes`` long, sent in pieces."""
                head = json.dumps(
                    {
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": "PLACEHOLDER"}}
                        ],
                    }
                ).split("PLACEHOLDER")
                size = len(head[0]) + fake.huge_bytes + len(head[1])
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(size))
                self.end_headers()
                try:
                    self.wfile.write(head[0].encode())
                    piece = b"x" * 1_000_000
                    for start in range(0, fake.huge_bytes, len(piece)):
                        self.wfile.write(piece[: fake.huge_bytes - start])
                    self.wfile.write(head[1].encode())
                except OSError:  # the client stopped reading at its limit
                    self.close_connection = True

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    @staticmethod
    def completion(
        body: dict[str, Any],
        result: Any,
        mode: str,
        fault: str | None,
        flood: tuple[int, int] = (37, 199_000),
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if fault == "flood":  # many calls with long arguments, each under the answer cap
            name = body["tools"][0]["function"]["name"] if body.get("tools") else "f"
            count, size = flood
            arguments = json.dumps({"x": "a" * size})
            message["tool_calls"] = [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i in range(count)
            ]
            if mode != "fc":
                message["tool_calls"] = None
                message["content"] = "[" + ", ".join([f"{name}(x='{'a' * size}')"] * count) + "]"
        elif fault == "malformed":
            name = body["tools"][0]["function"]["name"] if body.get("tools") else "f"
            message["tool_calls"] = [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": name, "arguments": "{not json"},
                }
            ]
        elif fault == "surrogate":  # a lone surrogate in the text and the arguments
            name = body["tools"][0]["function"]["name"] if body.get("tools") else "f"
            message["content"] = "\ud800"
            message["tool_calls"] = [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": name, "arguments": '{"a": "\ud800"}'},
                }
            ]
        elif mode == "fc" and isinstance(result, list):
            message["tool_calls"] = [
                {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, call in enumerate(result)
                for n, a in call.items()
            ]
        else:
            message["content"] = result
        choices = (
            [] if fault == "empty" else [{"index": 0, "message": message, "finish_reason": "stop"}]
        )
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": choices,
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }


if __name__ == "__main__":  # the command line: python -m pytest_bfcl.testing.fake_openai
    from pytest_bfcl.testing.fake_server_cli import main

    main()
