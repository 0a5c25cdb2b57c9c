"""A local ``/v1/completions`` server for tests of the completions route: it records every
request, answers each with the text a function of the request gives, counts tokens on
``POST /tokenize`` (one per whitespace-separated word) and lists its model with a context
window on ``GET /v1/models``. It listens on 127.0.0.1 only.

Run as a command it is a server to start with ``--bfcl-server-cmd`` (the stand-in ``vllm``
serves it too), answering every prompt as :mod:`.completions_answers` does::

    python -m pytest_bfcl.testing.completions_server --port {port} [--record FILE]

``--record FILE`` appends each request as a JSON line (``{"route": ..., "body": ...}``), for
tests that compare what two runs asked."""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pytest_bfcl.testing.completions_answers import completion_text
from pytest_bfcl.testing.loopback import LoopbackServer, send_json


class CompletionsServer(LoopbackServer):
    def __init__(
        self,
        answer: Callable[[dict[str, Any]], str],
        model: str = "test-model",
        context: int = 32768,
        port: int = 0,
        record: Path | None = None,
    ) -> None:
        """``record``: a file each request is appended to as a JSON line."""
        self.answer = answer
        self.model = model
        self.context = context
        self.record = record
        self.requests: list[dict[str, Any]] = []  # completions bodies, in arrival order
        self.tokenized: list[dict[str, Any]] = []  # /tokenize bodies
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/health":  # vLLM's readiness route
                    return self._send(200, {})
                if self.path.rstrip("/").endswith("/models"):
                    model = {"id": fake.model, "object": "model", "max_model_len": fake.context}
                    return self._send(200, {"object": "list", "data": [model]})
                return self._send(404, {"error": {"message": "no route"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                path = self.path.split("?", 1)[0].rstrip("/")
                if path.endswith("/tokenize"):
                    fake.keep("tokenize", body, fake.tokenized)
                    return self._send(200, {"count": len(str(body.get("prompt")).split())})
                if not path.endswith("/completions") or path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if body.get("max_tokens") == 1:  # a probe
                    return self._send(200, _completion(""))
                fake.keep("completions", body, fake.requests)
                return self._send(200, _completion(fake.answer(body)))

            def _send(self, status: int, payload: Any) -> None:
                send_json(self, status, payload)

        return Handler

    def keep(self, route: str, body: dict[str, Any], kept: list[dict[str, Any]]) -> None:
        """A request kept in memory, and appended to the record file when there is one."""
        with self.lock:
            kept.append(body)
            if self.record is not None:
                with self.record.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"route": route, "body": body}) + "\n")


def recorded(path: Path, route: str = "completions") -> list[dict[str, Any]]:
    """The bodies of one route in a record file, in arrival order (none when it is absent)."""
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [line["body"] for line in lines if line["route"] == route]


def answer_from_prompt(body: dict[str, Any]) -> str:
    """The answer :mod:`.completions_answers` gives the request's prompt."""
    return completion_text(str(body.get("prompt", "")))


def serve(port: int, model: str, context: int, record: Path | None) -> None:
    """Serve on 127.0.0.1:``port`` until stopped (Ctrl-C, or a signal)."""
    server = CompletionsServer(answer_from_prompt, model, context, port, record)
    print(f"serving {server.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_bfcl.testing.completions_server",
        description="A /v1/completions server on 127.0.0.1 answering from the prompt alone.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (a free one)")
    parser.add_argument("--model", default="test-model", help="the model it lists")
    parser.add_argument("--context", type=int, default=32768, help="its context window")
    parser.add_argument("--record", type=Path, help="append each request to this file")
    args = parser.parse_args(argv)
    serve(args.port, args.model, args.context, args.record)


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


if __name__ == "__main__":
    main()
