"""A run's identity for every report (the model, its sampling, the data, the selection, the
scoring rules and the gate's settings), unmasked: ``BfclRun.metadata`` masks secrets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_bfcl import __version__
from pytest_bfcl.gate import extra_body_digest as salted_digest
from pytest_bfcl.run.leaderboard import deviations
from pytest_bfcl.scoring import SCORING_RULES_VERSION

if TYPE_CHECKING:
    from pytest_bfcl.run.engine import BfclRun


def model_temperature(run: BfclRun) -> float | None:
    """The sampling temperature of models that sample (an endpoint); None otherwise."""
    sampling = run.model.metadata().get("sampling")
    if isinstance(sampling, dict) and "temperature" in sampling:
        value = sampling["temperature"]
        return float(value) if isinstance(value, int | float) else None
    return None


def extra_body(run: BfclRun) -> dict[str, Any]:
    """Request fields beyond the leaderboard's that an endpoint model sends (none for
    others): answers to other requests, not comparable to the leaderboard's."""
    extra = run.model.metadata().get("extra_body")
    return dict(extra) if isinstance(extra, dict) else {}


def extra_body_digest(run: BfclRun) -> str | None:
    """A salted, stretched digest of the request fields as sent: the reports mask a secret
    among them (``***``), and two runs whose secrets differ still send other requests; the
    salt keeps a guessable secret from being found again from the digest."""
    return salted_digest(extra_body(run))


def run_seed(run: BfclRun) -> int | None:
    """The seed that drew the run's sample or its sequential stages (None: a full run)."""
    if run.settings.sequential:
        return run.selection.stage_seed[0]
    return run.selection.sample_seed if run.sampled else None


def run_metadata(run: BfclRun) -> dict[str, Any]:
    settings, scoring, source = run.settings, run.scoring, run.source
    return {
        "model": run.model.name,
        "model_info": run.model.metadata(),
        "model_revision": settings.model_revision or None,
        "mode": scoring.mode,
        "underscore_to_dot": scoring.underscore_to_dot,
        "reasoning": scoring.reasoning,
        "leaderboard_model": settings.leaderboard_model,
        "leaderboard_note": run.leaderboard_note(),
        "leaderboard_deviations": deviations(settings),
        "categories": list(settings.categories),
        "dataset": {
            "version": source.version,
            "sha256": source.sha256,
            "data_dir": str(source.data_dir),
        },
        "plugin_version": __version__,
        "sample": settings.sample,
        "partial_eval": settings.partial_eval,
        "seed": run_seed(run),
        "detect": settings.detect,
        "sequential": settings.sequential,
        "samples": settings.samples,
        "temperature": model_temperature(run),
        "wire_format": run.model.metadata().get("wire_format"),
        "extra_body": extra_body(run),
        "extra_body_digest": extra_body_digest(run),
        "settings_change": list(run.settings.settings_change),
        "settings_changes": list(run.settings_changes),
        "scoring_rules": SCORING_RULES_VERSION,
        "known_errors": settings.known_errors,
        "gate": settings.gate.model_dump(),
    }
