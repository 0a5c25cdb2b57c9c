"""The web as the search tools see it, in one of three modes:

- ``live``: a search provider and the bounded fetcher;
- ``record``: live, and every answer (failures included) saved in a cassette;
- ``replay``: answers only from the cassette; anything not recorded stops the entry with an
  error naming the query or URL.

Answers are plain data: a search gives ``{"hits": [...]}`` or ``{"error": message}``, a fetch
``{"url", "status", "text"}`` or ``{"error": message}``.

Failing tools are visible: every failure is counted (the run's totals here, each entry's in its
backend), and when the network side fails :data:`FAILURES_TO_STOP` times in a row across the run
(searches that fail, fetches that time out or lose the connection; any success resets the
count) the session stops with :class:`WebToolsDown` instead of feeding error after error to the
model. :meth:`WebAccess.preflight` finds a missing extra, an empty recording or a dead network
before generation starts.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.errors import RunStopped, SetupError, ToolUnavailable
from pytest_bfcl.redact import redact_data
from pytest_bfcl.web.cassette import Cassette
from pytest_bfcl.web.fetch import FetchError, fetch_page
from pytest_bfcl.web.providers import SearchError, SearchProvider, make_provider

WebMode = Literal["live", "record", "replay", "off"]
MAX_SEARCH_RESULTS = 50
FAILURES_TO_STOP = 5  # network failures of the web tools in a row, across the run
PREFLIGHT_TIMEOUT = 20.0  # seconds for the probe search before generation
PREFLIGHT_QUERY = "Berkeley function calling leaderboard"
WEB_PACKAGES = {"bs4": "beautifulsoup4", "markdownify": "markdownify"}


class WebToolsDown(ToolUnavailable, RunStopped):
    """The web tools failed again and again: the network or the search service is down, and
    every further entry would only see errors. The session stops once."""


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
        self.failures: Counter[str] = Counter()  # "search" / "fetch" -> failures in the run
        self._streak = 0  # network failures in a row
        self.down_reason: str | None = None

    @property
    def mode(self) -> WebMode:
        return self.settings.mode

    def provider(self) -> SearchProvider:
        with self._lock:
            if self._provider is None:
                self._provider = make_provider(self.settings.provider, self.settings.search_url)
            return self._provider

    def search(self, keywords: str, count: int, region: str) -> dict[str, Any]:
        def live() -> tuple[dict[str, Any], bool]:
            try:
                return {"hits": self.provider().search(keywords, count, region)}, False
            except SearchError as exc:
                return {"error": str(exc)}, True

        request = {"keywords": keywords, "count": count, "region": region}
        return self._answer("search", request, live)

    def fetch(self, url: str) -> dict[str, Any]:
        def live() -> tuple[dict[str, Any], bool]:
            try:
                page = fetch_page(url, allow_private=self.settings.allow_private)
            except FetchError as exc:
                return {"error": str(exc)}, exc.network
            return {"url": page.url, "status": page.status, "text": page.text}, False

        return self._answer("fetch", {"url": url}, live)

    def _answer(
        self,
        kind: str,
        request: dict[str, Any],
        live: Callable[[], tuple[dict[str, Any], bool]],
    ) -> dict[str, Any]:
        """From the cassette when replaying; otherwise live, and saved when recording.
        ``live`` gives the answer and whether it is a network failure."""
        if self.mode == "replay":
            assert self.cassette is not None
            answer = redact_data(self.cassette.load(kind, request))  # a recording made before
            if "error" in answer:
                with self._lock:
                    self.failures[kind] += 1
            return answer
        self._raise_if_down()
        answer, network_failure = live()
        # A service that echoes the key it was sent must not put it in the conversation, the
        # model's requests, the cache, the results, the reports or a committed recording.
        answer = redact_data(answer)
        if self.mode == "record":
            assert self.cassette is not None
            self.cassette.save(kind, request, answer)
        self._note(kind, answer, network_failure)
        return answer

    def _note(self, kind: str, answer: dict[str, Any], network_failure: bool) -> None:
        with self._lock:
            if "error" not in answer:
                self._streak = 0
                return
            self.failures[kind] += 1
            if not network_failure:
                return  # a page that is missing or refused: the web answered
            self._streak += 1
            if self._streak >= FAILURES_TO_STOP and not self.down_reason:
                self.down_reason = (
                    f"the web tools failed {self._streak} times in a row (last, a {kind}: "
                    f"{answer['error']}); check the network or the search service "
                    "(--bfcl-web-provider, SERPAPI_API_KEY), or replay a recording with "
                    "--bfcl-web=replay"
                )
        self._raise_if_down()

    def _raise_if_down(self) -> None:
        if self.down_reason:
            raise WebToolsDown(self.down_reason)

    # -- before generation ----------------------------------------------------------------------

    def preflight(self) -> None:
        """Raise :class:`SetupError` when web search cannot work in this run: a missing extra
        (live and record), an empty recording (replay), or a search that does not answer."""
        if self.mode == "off":
            return
        if self.mode == "replay":
            self._check_recording()
            return
        self._check_packages()
        self._probe_search()

    def _check_recording(self) -> None:
        assert self.cassette is not None
        if not self.cassette.directory.is_dir():
            raise SetupError(
                f"the web recording {self.cassette.directory} does not exist "
                "(--bfcl-web-cassette; record one with --bfcl-web=record)"
            )
        if not any(self.cassette.count(kind) for kind in ("search", "fetch")):
            raise SetupError(
                f"the web recording {self.cassette.directory} holds no searches or pages "
                "(record it first with --bfcl-web=record)"
            )

    def _check_packages(self) -> None:
        needed = dict(WEB_PACKAGES)
        if self.settings.provider in ("auto", "duckduckgo"):
            needed["ddgs"] = "ddgs"
        missing = [
            pip for module, pip in needed.items() if importlib.util.find_spec(module) is None
        ]
        if self.settings.provider == "auto" and "ddgs" in missing and self._serpapi_configured():
            missing.remove("ddgs")  # auto picks SerpAPI then
        if missing:
            raise SetupError(
                f"web search needs {', '.join(missing)}, not installed here: "
                "pip install 'pytest-bfcl[web]' (or skip it with --bfcl-web=off)"
            )

    def _serpapi_configured(self) -> bool:
        return bool(os.environ.get("SERPAPI_API_KEY"))

    def _probe_search(self) -> None:
        outcome: list[BaseException | None] = []

        def search() -> None:
            try:
                self.provider().search(PREFLIGHT_QUERY, 1, "wt-wt")
                outcome.append(None)
            except BaseException as exc:  # reported below, in the caller's thread
                outcome.append(exc)

        worker = threading.Thread(target=search, name="bfcl-web-preflight", daemon=True)
        worker.start()
        worker.join(PREFLIGHT_TIMEOUT)
        if not outcome:
            problem = f"no answer within {PREFLIGHT_TIMEOUT:g} s"
        elif outcome[0] is None:
            return
        else:
            problem = str(outcome[0]) or type(outcome[0]).__name__
        raise SetupError(
            f"web search does not work here ({self.settings.provider} provider): {problem}; "
            "check the network or SERPAPI_API_KEY, or replay a recording with "
            "--bfcl-web=replay --bfcl-web-cassette=DIR (or skip it with --bfcl-web=off)"
        )
