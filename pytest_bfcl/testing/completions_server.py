"""A local ``/v1/completions`` server for tests of the completions route: it records every
request, answers each with the text a function of the request gives, counts tokens on
``POST /tokenize`` (one per whitespace-separated word) and lists its model with a context
window on ``GET /v1/models``. It listens on 127.0.0.1 only."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pytest_bfcl.testing.loopback import LoopbackServer, send_json


class CompletionsServer(LoopbackServer):
    def __init__(
        self,
        answer: Callable[[dict[str, Any]], str],
        model: str = "test-model",
        context: int = 32768,
    ) -> None:
        self.answer = answer
        self.model = model
        self.context = context
        self.requests: list[dict[str, Any]] = []  # completions bodies, in arrival order
        self.tokenized: list[dict[str, Any]] = []  # /tokenize bodies
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    model = {"id": fake.model, "object": "model", "max_model_len": fake.context}
                    return self._send(200, {"object": "list", "data": [model]})
                return self._send(404, {"error": {"message": "no route"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                path = self.path.split("?", 1)[0].rstrip("/")
                if path.endswith("/tokenize"):
                    with fake.lock:
                        fake.tokenized.append(body)
                    return self._send(200, {"count": len(str(body.get("prompt")).split())})
                if not path.endswith("/completions") or path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if body.get("max_tokens") == 1:  # a probe
                    return self._send(200, _completion(""))
                with fake.lock:
                    fake.requests.append(body)
                return self._send(200, _completion(fake.answer(body)))

            def _send(self, status: int, payload: Any) -> None:
                send_json(self, status, payload)

        return Handler


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
