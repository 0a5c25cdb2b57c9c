"""The web-search tools (``WebSearchAPI``): a search engine query and a page fetch.

The web itself comes from the run (:class:`pytest_bfcl.web.access.WebAccess`: live, recording
or replaying a cassette). ``show_snippet`` is the one piece of state: off for the no-snippet
category, where hits carry only a title and a link.

Each entry's tool failures (searches that gave an error, fetches that gave an error, simulated
ones included) are counted in ``tool_failures``, so a report can show that an answer was made
without working tools.
"""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlparse

from pytest_bfcl.backends.base import Backend
from pytest_bfcl.backends.long_context import LongContext
from pytest_bfcl.errors import ToolUnavailable
from pytest_bfcl.web.convert import render

if TYPE_CHECKING:  # web.access imports the backends' errors: import it when used
    from pytest_bfcl.web.access import WebAccess

# Seeds of the simulated fetch failures: one decides, the other words the error.
FAILURE_SEED, MESSAGE_SEED = 337, 1053


def simulated_failure(url: str, call: int, rate: float) -> bool:
    """Whether the ``call``-th fetch of an entry, of ``url``, fails under --bfcl-web-failure-rate.
    A hash of the call rather than a generator per entry: each entry's first draw would be the
    same number, so every entry's first fetch would fail or none would. The hash is uniform
    over calls, so a share ``rate`` of them fails, and the same ones on every rerun and in any
    process."""
    if rate <= 0:
        return False
    digest = hashlib.sha256(f"{FAILURE_SEED}\x1f{call}\x1f{url}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


class WebSearchAPI(Backend):
    DEFAULTS: ClassVar[dict[str, Any]] = {"show_snippet": True}

    show_snippet: bool

    def __init__(self) -> None:
        super().__init__()
        self._fetches = 0  # this entry's fetches so far: the n-th fetch of a URL decides anew
        self._messages = random.Random(MESSAGE_SEED)
        # not a public attribute: those are the backend's state
        self._tool_failures = {"search": 0, "fetch": 0}

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        self.show_snippet = bool(config.get("show_snippet", True))

    @property
    def tool_failures(self) -> dict[str, int]:
        """This entry's failed tool calls so far: ``{"search": n, "fetch": m}``."""
        return dict(self._tool_failures)

    def _web(self) -> WebAccess:
        web = self._services.web
        if web is None:
            raise ToolUnavailable("web access is off in this run (--bfcl-web=off)")
        return web

    def search_engine_query(
        self, keywords: str, max_results: int = 10, region: str = "wt-wt"
    ) -> Any:
        from pytest_bfcl.web.access import search_count

        answer = self._web().search(str(keywords), search_count(max_results), str(region))
        if "error" in answer:
            self._tool_failures["search"] += 1
            return {"error": answer["error"]}
        results = []
        for hit in answer["hits"][:max_results]:
            if self.show_snippet:
                results.append({"title": hit["title"], "href": hit["link"], "body": hit["snippet"]})
            else:
                results.append({"title": hit["title"], "href": hit["link"]})
        return results

    def fetch_url_content(self, url: str, mode: str = "raw") -> dict[str, str]:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        web = self._web()
        self._fetches += 1
        if simulated_failure(url, self._fetches, web.settings.failure_rate):
            self._tool_failures["fetch"] += 1
            return {"error": self._simulated_error(url)}
        page = web.fetch(url)
        if "error" in page:
            self._tool_failures["fetch"] += 1
            return {"error": f"An error occurred while fetching {url}: {page['error']}"}
        try:
            return {"content": render(page["text"], mode)}
        except Exception as exc:  # an unknown mode, or a page the converter cannot read
            self._tool_failures["fetch"] += 1
            return {"error": f"An error occurred while fetching {url}: {exc}"}

    def _simulated_error(self, url: str) -> str:
        """A realistic network error message (the benchmark's templates, read at run time)."""
        templates = self._services.fetch_error_templates
        parsed = urlparse(url)
        context = {
            "url": url,
            "host": parsed.hostname or "unknown",
            "path": parsed.path or "/",
            "id1": self._messages.randrange(0x10000000, 0xFFFFFFFF),
            "id2": self._messages.randrange(0x10000000, 0xFFFFFFFF),
        }
        if not templates:
            return f"Simulated network error for url: {url}"
        return str(self._messages.choice(templates)).format(**context)
