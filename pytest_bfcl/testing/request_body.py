"""A request body read by the test servers: bounded by its declared length and a cap, never
read whole into memory on a client's word (a 400 MB body is refused, not buffered)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

from pytest_bfcl.testing.loopback import send_json

BODY_MAX = 32 << 20  # bytes: a BFCL request with a long history is a few hundred kB


def read_body(handler: BaseHTTPRequestHandler, max_bytes: int = BODY_MAX) -> bytes | None:
    """The request's body, or ``None`` after answering 400 (no usable length) or 413 (longer
    than ``max_bytes``) and closing the connection (the unread body must not be taken for the
    next request)."""
    declared = handler.headers.get("content-length", "0").strip() or "0"
    if not declared.isdigit():
        _refuse(handler, 400, f"Content-Length {declared[:40]!r} is not a length")
        return None
    length = int(declared)
    if length > max_bytes:
        _refuse(handler, 413, f"the body of {length} bytes is over {max_bytes}")
        return None
    return handler.rfile.read(length)


def _refuse(handler: BaseHTTPRequestHandler, status: int, message: str) -> None:
    handler.close_connection = True
    send_json(handler, status, {"error": {"message": message}}, {"connection": "close"})
