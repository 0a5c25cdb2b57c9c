"""Extension points. Implement these in a model repository's ``conftest.py`` or in a package
registered under the ``pytest11`` entry point; outside pytest, register an object with these
functions on :func:`plugin_manager`'s manager.

- ``pytest_bfcl_make_model``: build the model for a ``--bfcl-model`` spelling (your own client,
  a wrapper around a built-in one). The first non-``None`` answer wins; the built-in models
  (``oracle``, ``replay:DIR``, ``vllm:MODEL``, an endpoint's model name) answer last.
- ``pytest_bfcl_add_categories``: your own categories from BFCL-format JSON files; checked by the
  same checkers and reported beside the benchmark's (they do not enter the V4 overall).
- ``pytest_bfcl_transform_request`` / ``pytest_bfcl_transform_response``: change each request
  before it is sent to an OpenAI-compatible endpoint (add vendor fields) and each response
  record before it is stored and scored (strip reasoning). Transforms are part of the cache key.
- ``pytest_bfcl_result``: observe every scored entry (a dashboard feed, a custom log).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pluggy

from pytest_bfcl.names import hookimpl, hookspec

__all__ = ["hookimpl", "hookspec", "plugin_manager"]

if TYPE_CHECKING:
    from pytest_bfcl.check.verdict import Verdict
    from pytest_bfcl.dataset.custom import CustomCategory
    from pytest_bfcl.dataset.fetch import DataSource
    from pytest_bfcl.models.base import Generation, Model
    from pytest_bfcl.scoring import ScoringOptions
    from pytest_bfcl.settings import Settings


@hookspec(firstresult=True)
def pytest_bfcl_make_model(
    spec: str, settings: Settings, scoring: ScoringOptions, source: DataSource, hook: Any
) -> Model | None:
    """Return a model for this ``--bfcl-model`` spelling, or ``None`` to leave it to others."""


@hookspec
def pytest_bfcl_add_categories() -> list[CustomCategory] | None:
    """Return categories to add (``CustomCategory`` objects)."""


@hookspec
def pytest_bfcl_transform_request(request: dict[str, Any], model: str) -> None:
    """Modify an endpoint request (a chat-completions JSON body) in place."""


@hookspec
def pytest_bfcl_transform_response(record: dict[str, Any], model: str) -> None:
    """Modify a response record (``result``, ``reasoning``, token counts...) in place.
    ``message`` is the answer's message as the server returned it, which a conversation echoes
    into its history: a transform that changes the answer changes it too."""


@hookspec
def pytest_bfcl_result(verdict: Verdict, generation: Generation) -> None:
    """Called with each entry's verdict as it is scored."""


def plugin_manager() -> pluggy.PluginManager:
    """A manager with these hooks and the built-in models, for use without pytest."""
    from pytest_bfcl import builtin_models as builtin

    manager = pluggy.PluginManager("pytest")
    manager.add_hookspecs(sys.modules[__name__])
    manager.register(builtin, "bfcl-builtin-models")
    return manager
