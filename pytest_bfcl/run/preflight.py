"""Set-up checks made once, before any generation: what would otherwise fail entry after entry
(a missing extra, an endpoint that refuses us, a broken result or data file, a missing web
recording) ends the session with one line that names the problem and the fix."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.errors import SetupError
from pytest_bfcl.kinds import KindSpec, kind_of
from pytest_bfcl.models.replay import ReplayError

if TYPE_CHECKING:
    from pytest_bfcl.run.engine import BfclRun

_find_spec = importlib.util.find_spec  # (tests replace it)


def left_out_for_extras(
    categories: tuple[str, ...],
    web: str,
    web_provider: str,
    find: Callable[[str], object] | None = None,
) -> dict[str, str]:
    """Categories of a default selection that this install cannot run, with the extra that
    brings what they need: the first run on a plain install scores what it can instead of
    ending in an error about packages (a category asked for by name still stops the run)."""
    find = find or _find_spec
    left: dict[str, str] = {}
    for category in categories:
        absent, extra = missing_packages(category, find)
        if absent:
            left[category] = extra
        elif _searches_live(category, web) and _web_modules_missing(web_provider, find):
            left[category] = "web"
    return left


def _searches_live(category: str, web: str) -> bool:
    return CATEGORIES[category].kind is Kind.WEB_SEARCH and web in ("live", "record")


def _web_modules_missing(provider: str, find: Callable[[str], object]) -> bool:
    """Whether live web search lacks a package of the web extra (a replay needs none)."""
    from pytest_bfcl.web.access import WEB_PACKAGES

    modules = list(WEB_PACKAGES)
    serpapi = provider == "serpapi" or (provider == "auto" and os.environ.get("SERPAPI_API_KEY"))
    if not serpapi:
        modules.append("ddgs")  # DuckDuckGo, the search without a key
    return any(find(module) is None for module in modules)


def left_out_line(left: dict[str, str]) -> str:
    """One line: the categories left out and the ``pip install`` that brings each group."""
    by_extra: dict[str, list[str]] = {}
    for category, extra in left.items():
        by_extra.setdefault(extra, []).append(category)
    parts = [
        f"{', '.join(names)} (pip install 'pytest-bfcl[{extra}]')"
        for extra, names in by_extra.items()
    ]
    return f"pytest-bfcl: left out of the default selection, not installed here: {'; '.join(parts)}"


# The CPU build of torch, installed before the memory extra (pip would pull a CUDA one).
_TORCH_FIRST = {
    "memory": " (on a machine without a GPU, first: pip install torch --index-url "
    "https://download.pytorch.org/whl/cpu)"
}


def preflight(run: BfclRun) -> None:
    """Raise :class:`SetupError` for the first set-up problem of the run."""
    check_data(run)
    check_extras(run)
    check_model(run)
    check_kinds(run)


def check_data(run: BfclRun) -> None:
    """Entries and ground truth of every selected category load, with unique ids (or were
    found to when the index a category has kept was made: dataset/index.py)."""
    try:
        for category in run.settings.categories:
            run.selection.check(category)
    except DatasetError as exc:
        raise SetupError(
            f"{exc} (the data directory is broken: check --bfcl-data, or delete the unpacked "
            "release so that it is fetched again)"
        ) from None


def missing_packages(
    category: str, find: Callable[[str], object] | None = None
) -> tuple[list[str], str]:
    """The packages a category needs that are not installed, and the extra that has them."""
    find = find or _find_spec
    packages, extra = kind_of(category).needed_packages(CATEGORIES[category])
    return [p for p in packages if find(p) is None], extra


def check_extras(run: BfclRun) -> None:
    if not run.holds_conversations:
        return  # stored answers are scored without the backends' packages
    for category in run.settings.categories:
        absent, extra = missing_packages(category)
        if absent:
            raise SetupError(
                f"{category} needs {', '.join(absent)}, not installed here: "
                f"pip install 'pytest-bfcl[{extra}]'{_TORCH_FIRST.get(extra, '')}, "
                "or leave the category out with --bfcl-category"
            )


def check_model(run: BfclRun) -> None:
    """The model can answer: a replay directory's files read cleanly, an endpoint answers."""
    if not run.expected_ids():
        return  # nothing to generate
    try:
        run.model.preflight(list(run.settings.categories))
    except ReplayError as exc:
        raise SetupError(str(exc)) from None


def start_shared_servers(model: object) -> None:
    """Under xdist, the servers a model starts on demand (``vllm:``): started when the first
    worker asks for them (workers share the controller's servers and cannot start them
    themselves), or now when the model has no way to be asked."""
    on_request = getattr(model, "serve_workers_on_request", None)
    start = getattr(model, "start_servers", None)
    if on_request is not None:
        on_request()
    elif start is not None:
        start()


def check_kinds(run: BfclRun) -> None:
    """Each kind's own set-up check, once for its selected categories (web access for web
    search, the public APIs of the executable categories)."""
    by_kind: dict[KindSpec, list[str]] = {}
    for category in run.settings.categories:
        by_kind.setdefault(kind_of(category), []).append(category)
    for kind, categories in by_kind.items():
        kind.preflight(run, categories)
