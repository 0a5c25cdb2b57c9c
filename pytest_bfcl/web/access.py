"""The web as the search tools see it, in one of three modes:

- ``live``: a search provider and the bounded fetcher;
- ``record``: live, and every answer (failures included) saved in a cassette;
- ``replay``: answers only from the cassette; anything not recorded stops the entry with an
  error naming the query or URL.

Answers are plain data: a search gives ``{"hits": [...]}`` or ``{"error": message}``, a fetch
``{"url", "status", "text"}`` or ``{"error": message}``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.web.cassette import Cassette
from pytest_bfcl.web.fetch import FetchError, fetch_page
from pytest_bfcl.web.providers import SearchError, SearchProvider, make_provider

WebMode = Literal["live", "record", "replay", "off"]
MAX_SEARCH_RESULTS = 50


class WebSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: WebMode = "live"
    cassette: Path | None = None
    provider: str = "auto"  # auto | serpapi | duckduckgo
    search_url: str | None = None  # a SerpAPI-compatible endpoint instead of serpapi.com
    allow_private: bool = False  # let fetches reach local and private addresses
    failure_rate: float = 0.0  # share of fetches answered with a simulated network error


class WebConfigError(ValueError):
    pass


def search_count(max_results: Any) -> int:
    """How many hits to ask a provider for (the tool slices its own ``max_results``)."""
    if isinstance(max_results, int) and not isinstance(max_results, bool):
        return max(1, min(max_results, MAX_SEARCH_RESULTS))
    return 10


class WebAccess:
    def __init__(self, settings: WebSettings, provider: SearchProvider | None = None) -> None:
        if settings.mode in ("record", "replay") and settings.cassette is None:
            raise WebConfigError(
                f"--bfcl-web={settings.mode} needs a cassette directory (--bfcl-web-cassette)"
            )
        if settings.mode == "replay" and not Path(settings.cassette or "").is_dir():
            raise WebConfigError(f"the web cassette {settings.cassette} does not exist")
        if not 0.0 <= settings.failure_rate <= 1.0:
            raise WebConfigError("--bfcl-web-failure-rate must be between 0 and 1")
        self.settings = settings
        self.cassette = Cassette(settings.cassette) if settings.cassette else None
        self._provider = provider
        self._lock = threading.Lock()

    @property
    def mode(self) -> WebMode:
        return self.settings.mode

    def provider(self) -> SearchProvider:
        with self._lock:
            if self._provider is None:
                self._provider = make_provider(self.settings.provider, self.settings.search_url)
            return self._provider

    def search(self, keywords: str, count: int, region: str) -> dict[str, Any]:
        def live() -> dict[str, Any]:
            try:
                return {"hits": self.provider().search(keywords, count, region)}
            except SearchError as exc:
                return {"error": str(exc)}

        request = {"keywords": keywords, "count": count, "region": region}
        return self._answer("search", request, live)

    def fetch(self, url: str) -> dict[str, Any]:
        def live() -> dict[str, Any]:
            try:
                page = fetch_page(url, allow_private=self.settings.allow_private)
            except FetchError as exc:
                return {"error": str(exc)}
            return {"url": page.url, "status": page.status, "text": page.text}

        return self._answer("fetch", {"url": url}, live)

    def _answer(
        self, kind: str, request: dict[str, Any], live: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        """From the cassette when replaying; otherwise live, and saved when recording."""
        if self.mode == "replay":
            assert self.cassette is not None
            return self.cassette.load(kind, request)
        answer = live()
        if self.mode == "record":
            assert self.cassette is not None
            self.cassette.save(kind, request, answer)
        return answer
