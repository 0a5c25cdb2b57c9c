"""The API sanity check of the executable categories, as a probe made once at session start.

The release ships the requests that should work (``executable_eval_sanity_check/``): one per
REST entry, with the stored response, and a few dozen executable-function calls. Before a live
or recording run scores ``rest`` or ``exec_*`` entries, each is sent once; an API that fails
(down, refusing the key, or answering in another shape than the stored response) makes the
entries that depend on it skip with the reason, instead of failing the model for it.
A replayed run sends nothing, so it is not probed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.exec_api import (
    CASSETTE_KIND,
    ApiClient,
    ApiRequestError,
    ApiUnavailable,
)
from pytest_bfcl.check.executable import exec_environment, run_call
from pytest_bfcl.check.rest import RestCallError, parse_rest_call, rest_mismatch
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.executable import ExecAnswer, exec_sanity_checks, read_json_lines
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.errors import SetupError, ToolUnavailable

if TYPE_CHECKING:
    from pytest_bfcl.kinds.base import RunContext


def probe_executable(
    dataset: Dataset, services: BackendServices, categories: Iterable[str]
) -> dict[str, str]:
    """Entry id -> why it is skipped, for the selected executable categories whose APIs fail
    their sanity check; empty when everything answers (or nothing is sent: replay, web off)."""
    selected = [c for c in categories if CATEGORIES[c].kind is Kind.EXECUTABLE]
    web = services.web
    if web is None or web.mode not in ("live", "record"):
        return {}
    skips: dict[str, str] = {}
    if any(CATEGORIES[c].variant == "rest" for c in selected):
        skips.update(_probe_rest(dataset, services))
    exec_categories = [c for c in selected if CATEGORIES[c].variant == "exec"]
    if exec_categories:
        skips.update(_probe_exec(dataset, services, exec_categories))
    return skips


def _probe_rest(dataset: Dataset, services: BackendServices) -> dict[str, str]:
    client = ApiClient(services.web)
    skips: dict[str, str] = {}
    for entry_id, answer in dataset.answers("rest").items():
        if not isinstance(answer, ExecAnswer) or not answer.call:
            continue
        try:
            request = parse_rest_call(answer.call)
        except RestCallError as exc:
            skips[entry_id] = f"the API sanity check's request is unreadable: {exc}"
            continue
        try:
            response = client.get(request)
            expected = json.loads(str(answer.ground_truth))
            problem = rest_mismatch(response.status, response.body, expected)
            reason = problem.message if problem else None
        except (ApiUnavailable, ApiRequestError, ToolUnavailable) as exc:
            reason = str(exc)
        if reason:
            host = urlsplit(request.url).hostname
            skips[entry_id] = f"the API sanity check of {host} failed: {reason}"
    return skips


def _probe_exec(
    dataset: Dataset, services: BackendServices, categories: list[str]
) -> dict[str, str]:
    failing: dict[str, str] = {}  # function name -> reason
    for check in exec_sanity_checks(dataset.root, read_json_lines):
        for call in check.get("ground_truth", []):
            name = str(call).split("(", 1)[0]
            if name in failing:
                continue
            try:
                outcome = run_call(exec_environment(services), str(call))
                error = outcome.error
            except ToolUnavailable as exc:
                error = str(exc)
            if error:
                failing[name] = f"the API sanity check of {name} failed: {error}"
    skips: dict[str, str] = {}
    for category in categories:
        for entry_id, answer in dataset.answers(category).items():
            if not isinstance(answer, ExecAnswer):
                continue
            names = [call.split("(", 1)[0].strip() for call in answer.calls]
            reason = next((failing[n] for n in names if n in failing), None)
            if reason:
                skips[entry_id] = reason
    return skips


def probe_run(run: RunContext) -> dict[str, str]:
    """:func:`probe_executable` for a run's data, web access and selected categories; for the
    session's preflight (call once, before generation, and skip the entries it returns)."""
    categories = list(run.settings.categories)
    if not any(CATEGORIES[c].kind is Kind.EXECUTABLE for c in categories):
        return {}
    return probe_executable(run.dataset, run.wiring.services(), categories)


def preflight_executable(run: RunContext) -> dict[str, str]:
    """The preflight's step for the executable categories: a replayed run needs a recording of
    API answers (:class:`SetupError` otherwise); a live or recording run probes the APIs.
    Returns the entries to skip, with the reason."""
    categories = list(run.settings.categories)
    if not any(CATEGORIES[c].kind is Kind.EXECUTABLE for c in categories):
        return {}
    if run.settings.web == "replay":
        cassette = Path(run.settings.web_cassette or "")
        if not any((cassette / CASSETTE_KIND).glob("*.json")):
            raise SetupError(
                f"the web recording {cassette} holds no API answers for the executable "
                "categories (record them first with --bfcl-web=record)"
            )
        return {}
    return probe_run(run)
