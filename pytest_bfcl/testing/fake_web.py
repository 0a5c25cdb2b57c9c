"""A local stand-in for the web: a SerpAPI-compatible search endpoint whose hits point at pages
it also serves. Lets the web-search path (providers, fetching, cassettes) run without internet."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from pytest_bfcl.testing.loopback import LoopbackServer

PAGE = """<html><head><title>{title}</title><style>body {{ color: red; }}</style>
<script>var hidden = 1;</script></head>
<body><h1>{title}</h1><p>Notes about <b>{query}</b>.</p><p>Second paragraph.</p></body></html>"""


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up early (the size-limit test) are expected


class FakeWeb(LoopbackServer):
    def __init__(self, hits: int = 3) -> None:
        self.hits = hits
        self.echo_key = False  # a careless service quoting the request's api_key in its hits
        self.snippet_chars = 0  # each hit's snippet padded to this many characters (a flood)
        self.requests: Counter[str] = Counter()  # "search" / "page" -> count
        self.lock = threading.Lock()
        self.server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def search_url(self) -> str:
        return f"{self.base}/search.json"

    def organic_results(self, query: str) -> list[dict[str, str]]:
        slug = "".join(c if c.isalnum() else "-" for c in query.lower())[:40]
        return [
            {
                "title": f"Result {i} for {query}",
                "link": f"{self.base}/page/{slug}/{i}",
                "snippet": f"Snippet {i} about {query}".ljust(self.snippet_chars, "s"),
            }
            for i in range(self.hits)
        ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        web = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path == "/search.json":
                    query = parse_qs(url.query).get("q", [""])[0]
                    with web.lock:
                        web.requests["search"] += 1
                    hits = web.organic_results(query)
                    if web.echo_key:
                        key = parse_qs(url.query).get("api_key", [""])[0]
                        for hit in hits:
                            hit["snippet"] += f" (served to api_key={key}; key {key} is valid)"
                    body = json.dumps({"organic_results": hits})
                    return self._send(200, body, "application/json")
                if url.path.startswith("/page/"):
                    with web.lock:
                        web.requests["page"] += 1
                    title = url.path.removeprefix("/page/")
                    return self._send(200, PAGE.format(title=title, query=title), "text/html")
                if url.path == "/redirect-home":
                    self.send_response(302)
                    self.send_header("location", "http://localhost/admin")
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return None
                if url.path == "/drip":  # a page sent one byte every half second
                    self.send_response(200)
                    self.send_header("content-type", "text/html")
                    self.send_header("content-length", "1000")
                    self.end_headers()
                    for _ in range(1000):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        time.sleep(0.5)
                    return None
                if url.path == "/big":
                    return self._send(200, "x" * 6_000_000, "text/plain")
                return self._send(404, "not here", "text/plain")

            def _send(self, status: int, body: str, content_type: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("content-type", f"{content_type}; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
