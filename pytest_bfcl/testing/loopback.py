"""What every test server here shares: it listens on 127.0.0.1, serves on a thread of its own,
starts on entering a ``with`` block and stops on leaving it."""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer
from typing import Any, TypeVar

_Server = TypeVar("_Server", bound="LoopbackServer")


class LoopbackServer:
    """Subclasses set ``server`` (bound to 127.0.0.1) and ``thread`` (its ``serve_forever``)."""

    server: ThreadingHTTPServer
    thread: threading.Thread

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API's root."""
        return f"{self.base}/v1"

    def __enter__(self: _Server) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def send_json(
    handler: Any, status: int, payload: Any, headers: dict[str, str] | None = None
) -> None:
    """Answer a request with ``payload`` as JSON (bytes are sent as they are), its length
    declared, and any ``headers`` besides."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)
