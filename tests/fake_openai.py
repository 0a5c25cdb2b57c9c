"""A local OpenAI-compatible chat server for tests: it answers each BFCL question with the
oracle's answer (tool calls or text), multi-turn conversations step by step, and can inject
faults per entry: 429s, 500s, stalls, dropped connections, malformed tool calls and empty
choices. It listens on 127.0.0.1 only."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.models.base import StepRequest, Task
from pytest_bfcl.models.oracle import OracleModel

_TOOL_RESULTS_PREFIX = "[{'role': 'tool'"  # prompting mode feeds results back as user messages


def conversation_position(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """(turn, step) of a multi-turn request: turns are the user's own messages, steps the
    assistant messages since the last of them."""
    turn, step = -1, 0
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        if role == "user" and not str(content).startswith(_TOOL_RESULTS_PREFIX):
            turn, step = turn + 1, 0
        elif role == "assistant":
            step += 1
    return turn, step


def question_key(messages: list[dict[str, Any]]) -> str:
    """Identify a request by its non-system messages."""
    return json.dumps([m for m in messages if m.get("role") != "system"], sort_keys=True)


class FakeOpenAI:
    def __init__(
        self, dataset: Dataset, categories: list[str], latency: float = 0.0, mode: str = "fc"
    ) -> None:
        self.latency = latency
        self.mode = mode  # answer with tool calls (fc) or text (prompt)
        self.faults: dict[str, list[str]] = {}  # entry id -> faults to apply, one per request
        self.requests: Counter[str] = Counter()  # entry id -> requests received
        self.lock = threading.Lock()
        self.answers: dict[str, tuple[str, dict[str, Any]]] = {}
        fc, prompt = (
            OracleModel(ScoringOptions("fc", True)),
            OracleModel(ScoringOptions("prompt", False)),
        )
        self.oracles = {"fc": fc, "prompt": prompt}
        # multi-turn: entry by its first user message (one multi-turn category per server)
        self.conversations: dict[str, Task] = {}
        for category in categories:
            answers = dataset.answers(category)
            for entry in dataset.entries(category):
                task = Task(entry, answers.get(entry.id))
                if CATEGORIES[category].kind is Kind.MULTI_TURN:
                    self.conversations[entry.question[0][-1].content] = task
                    continue
                key = question_key([m.model_dump() for m in entry.question[0]])
                self.answers[key] = (
                    entry.id,
                    {"fc": fc.generate(task).result, "prompt": prompt.generate(task).result},
                )
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer_for(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        messages = body["messages"]
        key = question_key(messages)
        if key in self.answers:
            return self.answers[key]
        first = next(m for m in messages if m.get("role") == "user")
        task = self.conversations[first["content"]]
        turn, step = conversation_position(messages)
        replies = {
            mode: oracle.step(StepRequest(task, messages, [], mode, turn, step)).result
            for mode, oracle in self.oracles.items()
        }
        return task.entry.id, replies

    def total_requests(self) -> int:
        return sum(self.requests.values())

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                entry_id, answer = fake.answer_for(body)
                with fake.lock:
                    fake.requests[entry_id] += 1
                    pending = fake.faults.get(entry_id, [])
                    fault = pending.pop(0) if pending else None
                if fake.latency:
                    time.sleep(fake.latency)
                if fault == "429":
                    return self._send(
                        429, {"error": {"message": "slow down"}}, {"retry-after": "0"}
                    )
                if fault == "500":
                    return self._send(500, {"error": {"message": "boom"}})
                if fault == "stall":
                    time.sleep(3)
                    return self._send(500, {"error": {"message": "late"}})
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                return self._send(200, fake.completion(body, answer[fake.mode], fake.mode, fault))

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
        body: dict[str, Any], result: Any, mode: str, fault: str | None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if fault == "malformed":
            name = body["tools"][0]["function"]["name"] if body.get("tools") else "f"
            message["tool_calls"] = [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": name, "arguments": "{not json"},
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
