"""Search providers behind one interface.

A provider answers a query with the hits in one shape, ``{"title", "link", "snippet"}`` per
hit (the shape of the benchmark's search service), or raises :class:`SearchError` with the
message the model should see. Rate limiting is retried with a bounded exponential back-off;
the benchmark retries forever, which can hang a CI job for good.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from typing import Any, Protocol

from pytest_bfcl.web.transport import bounded_client, deadline, httpx

SERPAPI_URL = "https://serpapi.com/search.json"
RATE_LIMIT_RETRIES = 6
BACKOFF_START, BACKOFF_CAP = 2.0, 60.0
MAX_ANSWER_BYTES = 5_000_000  # a search answer is tens of kB


class SearchError(Exception):
    """A search that failed; the message is what the model is told."""


class RateLimited(SearchError):
    pass


class SearchProvider(Protocol):
    name: str

    def search(self, keywords: str, count: int, region: str) -> list[dict[str, Any]]: ...


def with_rate_limit_retries(
    attempt: Callable[[], list[dict[str, Any]]],
    retries: int = RATE_LIMIT_RETRIES,
    sleep: Callable[[float], None] = time.sleep,
) -> list[dict[str, Any]]:
    backoff = BACKOFF_START
    for tries in range(retries + 1):
        try:
            return attempt()
        except RateLimited:
            if tries == retries:
                raise
            sleep(backoff + random.uniform(0, backoff))
            backoff = min(backoff * 2, BACKOFF_CAP)
    raise AssertionError("unreachable")


class SerpApiProvider:
    """SerpAPI's DuckDuckGo engine (the benchmark's own search service); needs a key."""

    name = "serpapi"

    def __init__(self, api_key: str, url: str = SERPAPI_URL, timeout: float = 30.0) -> None:
        self.api_key, self.url, self.timeout = api_key, url, timeout  # timeout: whole request
        self._http = bounded_client(timeout=timeout)

    def search(self, keywords: str, count: int, region: str) -> list[dict[str, Any]]:
        params = {"engine": "duckduckgo", "q": keywords, "kl": region, "api_key": self.api_key}
        return with_rate_limit_retries(lambda: self._once(params))

    def _get(self, params: dict[str, str]) -> tuple[int, bytes]:
        """Status and body (at most MAX_ANSWER_BYTES) of one request, within the timeout."""
        try:
            with deadline(self.timeout), self._http.stream("GET", self.url, params=params) as got:
                body = bytearray()  # (appending to bytes copies it whole at every chunk)
                for chunk in got.iter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise SearchError(
                            f"the search answer is larger than {MAX_ANSWER_BYTES} bytes"
                        )
                return got.status_code, bytes(body)
        except httpx.TimeoutException:
            raise SearchError(
                f"the search service did not answer within {self.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise SearchError(f"{type(exc).__name__}: {exc}") from None

    def _once(self, params: dict[str, str]) -> list[dict[str, Any]]:
        status, body = self._get(params)
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            text = body[:200].decode("utf-8", "replace")
            payload = {"error": f"HTTP {status}: {text}"}
        error = str(payload.get("error", "")) if isinstance(payload, dict) else ""
        if status == 429 or "429" in error:
            raise RateLimited(error or "429 Too Many Requests")
        hits = payload.get("organic_results") if isinstance(payload, dict) else None
        if not isinstance(hits, list):
            raise SearchError(
                "Failed to retrieve the search results from server. Please try again later."
            )
        return [hit for hit in hits if isinstance(hit, dict)]


class DuckDuckGoProvider:
    """DuckDuckGo through the ``ddgs`` client library (no key)."""

    name = "duckduckgo"

    def __init__(self) -> None:
        try:
            from ddgs import DDGS
            from ddgs.exceptions import RatelimitException
        except ImportError as exc:
            raise SearchError(
                f"DuckDuckGo search needs the ddgs package: pip install 'pytest-bfcl[web]' ({exc})"
            ) from exc
        self._client, self._rate_limit = DDGS, RatelimitException

    def search(self, keywords: str, count: int, region: str) -> list[dict[str, Any]]:
        return with_rate_limit_retries(lambda: self._once(keywords, count, region))

    def _once(self, keywords: str, count: int, region: str) -> list[dict[str, Any]]:
        try:
            hits = self._client().text(keywords, region=region, max_results=count)
        except self._rate_limit as exc:
            raise RateLimited(str(exc)) from None
        except Exception as exc:  # the library's own errors and transport errors
            raise SearchError(str(exc)) from None
        return [
            {"title": h.get("title", ""), "link": h.get("href", ""), "snippet": h.get("body", "")}
            for h in hits or []
        ]


def make_provider(name: str, search_url: str | None = None) -> SearchProvider:
    """``auto``: SerpAPI when SERPAPI_API_KEY is set, DuckDuckGo otherwise."""
    key = os.environ.get("SERPAPI_API_KEY", "")
    if name == "auto":
        name = "serpapi" if key else "duckduckgo"
    if name == "serpapi":
        if not key and not search_url:
            raise SearchError("the serpapi provider needs SERPAPI_API_KEY in the environment")
        return SerpApiProvider(key, search_url or SERPAPI_URL)
    if name == "duckduckgo":
        return DuckDuckGoProvider()
    raise SearchError(f"unknown web search provider {name!r}: use auto, serpapi or duckduckgo")
