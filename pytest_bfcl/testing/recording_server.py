"""A local model server that answers from the request alone and records every request: chat
completions on ``POST .../chat/completions``, OpenAI's Responses API on ``POST .../responses``
(answers from :class:`~pytest_bfcl.testing.scripted_answers.Script`), its model list on
``GET .../models``. Two harnesses pointed at it in turn can be compared request by request
(:mod:`pytest_bfcl.conformance.requests`); tests use it as a fake Responses server, with
faults to inject. It listens on 127.0.0.1 only."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel

from pytest_bfcl.testing.completions_answers import completion
from pytest_bfcl.testing.loopback import LoopbackServer, send_json
from pytest_bfcl.testing.request_body import read_body
from pytest_bfcl.testing.scripted_answers import Script

# Answers that are no model answer, by fault name (each used once, in the order queued).
FAULTS: dict[str, tuple[int, Any]] = {
    "500": (500, {"error": {"message": "internal error"}}),
    "error200": (200, {"error": {"message": "upstream provider failed", "code": 502}}),
    "failed200": (
        200,
        {
            "status": "failed",
            "error": {"code": "server_error", "message": "The model failed to generate"},
            "output": [],
        },
    ),
    "no_output": (200, {"id": "resp_x", "object": "response", "status": "completed"}),
    "chat_answer": (200, {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}),
    "not_json": (200, "this is not JSON"),
    "context": (
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    ),
}


class Recorded(BaseModel):
    """One request as it came: the route (``chat/completions`` or ``responses``), the body."""

    route: str
    body: dict[str, Any]


class _Server(ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True


class RecordingServer(LoopbackServer):
    def __init__(self, script: Script | None = None, models: tuple[str, ...] = ()) -> None:
        self.script = script or Script()
        self.models = models  # listed on GET /models; empty: any name is served
        self.recorded: list[Recorded] = []
        self.faults: list[str] = []  # answered instead of the next requests, one each
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def take(self) -> list[Recorded]:
        """The requests recorded so far, forgotten here."""
        with self.lock:
            taken, self.recorded = self.recorded, []
        return taken

    def answer(self, route: str, body: dict[str, Any]) -> tuple[int, Any]:
        with self.lock:
            fault = self.faults.pop(0) if self.faults else None
            if fault is None:
                self.recorded.append(Recorded(route=route, body=body))
        if fault is not None:
            return FAULTS[fault]
        if route == "responses":
            return 200, self.script.response(body)
        if route == "completions":  # the open-weight handlers' route
            return 200, completion(body)
        return 200, self.script.completion(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    listing = [{"id": name, "object": "model"} for name in owner.models]
                    return self._send(200, {"object": "list", "data": listing})
                return self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                raw = read_body(self)
                if raw is None:
                    return None
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._send(400, {"error": {"message": "the body is not JSON"}})
                path = self.path.split("?", 1)[0].rstrip("/")
                for route in ("chat/completions", "responses", "completions"):
                    if path.endswith("/" + route):
                        return self._send(*owner.answer(route, body))
                return self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: Any) -> None:
                send_json(self, status, payload.encode() if isinstance(payload, str) else payload)

        return Handler
