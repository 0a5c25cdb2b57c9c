"""A model from its ``--bfcl-model`` spelling, through the plugin's hook."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.dataset.fetch import DataSource
from pytest_bfcl.hookspecs import plugin_manager
from pytest_bfcl.models.base import ModelBase, ModelSpecError, with_defaults
from pytest_bfcl.scoring import ScoringOptions
from pytest_bfcl.settings import Settings


def make_model(
    spec: str,
    scoring: ScoringOptions,
    settings: Settings | None = None,
    source: DataSource | None = None,
    hook: Any = None,
) -> ModelBase:
    """Build a model from its ``--bfcl-model`` spelling through the ``pytest_bfcl_make_model``
    hook: a project's own handlers first, then the built-in ones (``oracle``, ``replay:DIR``,
    an endpoint's model name)."""
    if hook is None:
        hook = plugin_manager().hook
    model = hook.pytest_bfcl_make_model(
        spec=spec, settings=settings, scoring=scoring, source=source, hook=hook
    )
    if model is None:
        raise ModelSpecError(f"unknown model {spec!r}: use 'oracle', 'replay:DIR' or an endpoint")
    return with_defaults(model)
