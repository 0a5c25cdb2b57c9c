"""Checks that keep a baseline from lying by accident: its format label matches what it holds,
its totals make sense, its known-errors policy matches the run's, and a merge takes runs of
one model under one policy, each run once (every recorded baseline carries a run id).

What they protect against is an accident (a file edited by hand, cut short, relabelled, merged
with the wrong files), not a forger: anyone who can edit the file can recompute its digest."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_bfcl.gate.baseline import Baseline

FIRST_FORMAT = "pytest-bfcl-baseline/1"
SECOND_FORMAT = "pytest-bfcl-baseline/2"
# What a file of each older format cannot hold: a file labelled so that holds them was
# relabelled (which used to skip the checks of its real format).
_LATER_FIELDS = {
    FIRST_FORMAT: ("totals", "digest", "rates"),
    SECOND_FORMAT: ("rates",),
}
_LATER_STAMPS = ("scoring_rules", "run_id", "merged_runs")
MAX_ENTRIES = 10**6  # more entries than any category could have: not a count
# What two runs must share for their verdicts to be merged, besides data, mode and rules.
_MERGE_STAMPS = {
    "known_errors": "known-errors policy",
    "reasoning": "reasoning mode",
    "underscore_to_dot": "function-name convention",
}


def new_run_id() -> str:
    return uuid.uuid4().hex


def format_problems(raw: dict[str, Any]) -> list[str]:
    """A file labelled with an older format that holds what only a later one has."""
    label = raw.get("format")
    later = [name for name in _LATER_FIELDS.get(str(label), ()) if raw.get(name)]
    metadata = raw.get("metadata")
    if label in _LATER_FIELDS and isinstance(metadata, dict):
        later += [f"metadata.{name}" for name in _LATER_STAMPS if name in metadata]
    if not later:
        return []
    return [f"it is labelled {label!r} but holds {', '.join(later)}, which that format lacks"]


def totals_problems(baseline: Baseline) -> list[str]:
    """Totals that no run could have recorded."""
    problems = []
    for name, total in sorted(baseline.totals.items()):
        expected, scored = total.get("expected"), total.get("scored")
        if not isinstance(expected, int) or not 0 <= expected <= MAX_ENTRIES:
            problems.append(f"{name}'s expected total {expected!r} is not a count of entries")
        elif not isinstance(scored, int) or not 0 <= scored <= expected:
            problems.append(f"{name} recorded {scored!r} scored of {expected} expected")
    return problems


def policy_differences(recorded: dict[str, Any], metadata: dict[str, Any]) -> list[str]:
    """The known-errors policy decides the ground truth of the entries whose published truth
    is known to be wrong: ``correct`` judges them against the fixed truth, ``include`` and
    ``exclude`` against the published one (``exclude`` only leaves them out of the gate).
    Verdicts judged against another truth are not comparable."""
    before, now = recorded.get("known_errors"), metadata.get("known_errors")
    if before is None or now is None or (before == "correct") == (now == "correct"):
        return []
    return [
        f"known-errors policy differs: baseline {before!r}, this run {now!r} (run with "
        f"--bfcl-known-errors={before}, or record the baseline again)"
    ]


def model_of(metadata: dict[str, Any]) -> str:
    """The model a baseline is of: its served name, and its identity where one was given
    (``--bfcl-model-identity``: a checkpoint hash, serving flags)."""
    info = metadata.get("model_info")
    identity = info.get("identity") if isinstance(info, dict) else None
    name = str(metadata.get("model"))
    return f"{name} [{identity}]" if identity else name


def runs_of(baseline: Baseline) -> list[str]:
    """The run ids a baseline was recorded from; an older one without any is known by its
    digest and finishing time (so copies of one file are still one run)."""
    merged = baseline.metadata.get("merged_runs")
    if isinstance(merged, list) and merged:
        return [str(run) for run in merged]
    run = baseline.metadata.get("run_id")
    if run:
        return [str(run)]
    return [f"unlabelled:{baseline.digest}:{baseline.metadata.get('finished_at')}"]


def merge_refusals(baselines: list[Baseline]) -> list[str]:
    """Why these baselines cannot be merged: other models, other policies, a run twice."""
    first = baselines[0].metadata
    problems = []
    models = sorted({model_of(b.metadata) for b in baselines})
    if len(models) > 1:
        problems.append(f"they are of different models ({', '.join(models)})")
    for key, what in _MERGE_STAMPS.items():
        values = {repr(b.metadata.get(key, first.get(key))) for b in baselines}
        if len(values) > 1:
            problems.append(f"their {what} differs ({', '.join(sorted(values))})")
    counts = Counter(run for b in baselines for run in runs_of(b))
    twice = sorted(run for run, n in counts.items() if n > 1)
    if twice:
        problems.append(
            f"{len(twice)} run(s) would count more than once (run {twice[0]}): merge each "
            "recorded run once"
        )
    return problems


def merged_runs(baselines: list[Baseline]) -> list[str]:
    return [run for b in baselines for run in runs_of(b)]
