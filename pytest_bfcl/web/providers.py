"""Search providers behind one interface.

A provider answers a query with the hits in one shape, ``{"title", "link", "snippet"}`` per
hit (the shape of the benchmark's search service), or raises :class:`SearchError` with the
message the model should see. Rate limiting is retried with a bounded exponential back-off;
the benchmark retries forever, which can hang a CI job for good.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any, Protocol

import requests

SERPAPI_URL = "https://serpapi.com/search.json"
RATE_LIMIT_RETRIES = 6
BACKOFF_START, BACKOFF_CAP = 2.0, 60.0


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
        self.api_key, self.url, self.timeout = api_key, url, timeout
        self._http = requests.Session()

    def search(self, keywords: str, count: int, region: str) -> list[dict[str, Any]]:
        params = {"engine": "duckduckgo", "q": keywords, "kl": region, "api_key": self.api_key}
        return with_rate_limit_retries(lambda: self._once(params))

    def _once(self, params: dict[str, str]) -> list[dict[str, Any]]:
        try:
            response = self._http.get(self.url, params=params, timeout=self.timeout)
        except requests.RequestException as exc:
            raise SearchError(str(exc)) from None
        try:
            payload = response.json()
        except ValueError:
            payload = {"error": f"HTTP {response.status_code}: {response.text[:200]}"}
        error = str(payload.get("error", "")) if isinstance(payload, dict) else ""
        if response.status_code == 429 or "429" in error:
            raise RateLimited(error or "429 Too Many Requests")
        if not isinstance(payload, dict) or "organic_results" not in payload:
            raise SearchError(
                "Failed to retrieve the search results from server. Please try again later."
            )
        return list(payload["organic_results"])


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
