"""Baselines: the per-entry verdicts of a reference run, saved and compared against.

A baseline records the run's identity (model, mode, dataset release, categories, sample) so a
comparison on other data or another mode is refused instead of producing meaningless flips.
It also records its own totals (entries expected and scored per category) and a digest of its
verdicts, so a baseline that lost verdicts (edited, truncated, merged badly) is refused instead
of quietly gating on the few entries left.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.files import loads_bounded, read_problem, read_regular_file, write_json_atomic
from pytest_bfcl.gate.baseline_answers import BaselineAnswers, merged_answers, pack_answers
from pytest_bfcl.gate.baseline_integrity import (
    format_problems,
    merge_refusals,
    merged_runs,
    policy_differences,
    totals_problems,
)
from pytest_bfcl.gate.baseline_signature import signature_problems
from pytest_bfcl.gate.settings_change import setting_differences, undeclared

BASELINE_FORMAT = "pytest-bfcl-baseline/3"
# Read as well: the second format (one verdict per entry, no stamps) and the first, checked
# against the per-category totals it kept.
FIRST_FORMAT = "pytest-bfcl-baseline/1"
LEGACY_FORMATS = ("pytest-bfcl-baseline/2", FIRST_FORMAT)


class BaselineError(ValueError):
    """A baseline that cannot be read or does not fit this run."""


class Baseline(BaseModel):
    model_config = ConfigDict(frozen=True)

    format: str = BASELINE_FORMAT
    metadata: dict[str, Any]
    verdicts: dict[str, bool]  # entry id -> valid
    categories: dict[str, Any] = {}  # per-category scores at recording time (informational)
    # category -> {"expected": n, "scored": n}: what the recorded run was asked to score and
    # scored; a baseline's verdicts must add up to its "scored" counts.
    totals: dict[str, dict[str, int]] = {}
    digest: str | None = None  # sha256 of the verdicts (see verdicts_digest)
    # Entries asked several times (recorded over K samples, or merged from several runs):
    # id -> [passes, samples]; ``verdicts`` then says whether every sample passed.
    rates: dict[str, tuple[int, int]] = {}
    # The recorded run's answers, packed (gate/baseline_answers.py); None in a baseline
    # recorded without them.
    # Any shape: an unreadable field leaves the verdicts gating (BaselineAnswers says why)
    answers: Any = None

    def verdict(self, entry_id: str) -> bool | None:
        return self.verdicts.get(entry_id)

    def rate(self, entry_id: str) -> tuple[int, int]:
        return self.rates.get(entry_id) or (int(self.verdicts[entry_id]), 1)

    def pass_rates(self) -> dict[str, tuple[int, int]]:
        """Every entry's (passes, samples), what the gate compares with."""
        return {entry_id: self.rate(entry_id) for entry_id in self.verdicts}

    @property
    def samples(self) -> int:
        """The fewest samples any entry was recorded with (1 for a single run)."""
        return min((k for _, k in self.rates.values()), default=1) if self.rates else 1

    @property
    def flaky(self) -> list[str]:
        return sorted(i for i, (p, k) in self.rates.items() if 0 < p < k)

    @property
    def covered_categories(self) -> set[str]:
        return set(self.metadata.get("categories", [])) | set(self.totals)


def verdicts_digest(
    verdicts: dict[str, bool], rates: dict[str, tuple[int, int]] | None = None
) -> str:
    canonical = json.dumps(sorted(verdicts.items()), separators=(",", ":"))
    if rates:  # the second format's digest covers the verdicts alone
        canonical += json.dumps(sorted((i, list(r)) for i, r in rates.items()))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def save_baseline(
    path: Path,
    verdicts: dict[str, bool],
    metadata: dict[str, Any],
    categories: dict[str, Any],
    expected: dict[str, int] | None = None,
    rates: dict[str, tuple[int, int]] | None = None,
    answers: dict[str, str] | None = None,
) -> None:
    """``expected``: the number of entries the run was asked to score, per category;
    ``rates``: (passes, samples) of entries asked several times; ``answers``: the run's
    answers as text, by entry id."""
    data = baseline_data(verdicts, metadata, categories, expected, rates, answers)
    write_json_atomic(path, data)


def baseline_data(
    verdicts: dict[str, bool],
    metadata: dict[str, Any],
    categories: dict[str, Any],
    expected: dict[str, int] | None = None,
    rates: dict[str, tuple[int, int]] | None = None,
    answers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A baseline as the JSON it is saved as (with ``answers``, they are packed in it)."""
    rates = {i: (int(p), int(k)) for i, (p, k) in (rates or {}).items() if k > 1}
    scored = Counter(category_of_id(i) for i in verdicts)
    names = sorted(set(scored) | set(expected or {}))
    totals = {
        name: {"expected": (expected or {}).get(name, scored[name]), "scored": scored[name]}
        for name in names
    }
    baseline = Baseline(
        metadata=metadata,
        verdicts=dict(sorted(verdicts.items())),
        categories=categories,
        totals=totals,
        digest=verdicts_digest(verdicts, rates),
        rates=dict(sorted(rates.items())),
    )
    data = baseline.model_dump(mode="json", exclude={"answers"})
    if answers is not None:
        data["answers"] = pack_answers(answers)
    return data


def load_baseline(path: Path, key: bytes | None = None) -> Baseline:
    """A baseline from its file; every problem is a :class:`BaselineError` naming the file;
    with a signing ``key``, one whose signature does not match is refused.
    Read bounded: at most 256 MiB (a full run's baseline is about 300 kB), nested at most 64
    deep (one is 4 deep), a regular file only."""
    try:
        raw = loads_bounded(read_regular_file(Path(path), 256 * 2**20).decode("utf-8"), 64)
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {read_problem(exc)}") from None
    except UnicodeDecodeError as exc:
        raise BaselineError(
            f"baseline {path} is not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise BaselineError(f"baseline {path} is not JSON: {exc}") from None
    if not isinstance(raw, dict) or raw.get("format") not in (BASELINE_FORMAT, *LEGACY_FORMATS):
        raise BaselineError(
            f"{path} is not a pytest-bfcl baseline (expected format {BASELINE_FORMAT!r}, "
            f"got {raw.get('format') if isinstance(raw, dict) else type(raw).__name__!r})"
        )
    try:
        baseline = Baseline.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise BaselineError(f"baseline {path} is malformed at {where}: {first['msg']}") from exc
    problems = format_problems(raw) + tampering(baseline) + totals_problems(baseline)
    if problems:
        raise BaselineError(
            f"baseline {path} does not add up: {'; '.join(problems)}. It was edited or cut "
            "short after it was recorded; record it again (--bfcl-save-baseline)."
        )
    if unsigned := signature_problems(raw, key):
        raise BaselineError(
            f"baseline {path} is refused: {unsigned[0]}; record it again with the key "
            "(--bfcl-save-baseline and --bfcl-baseline-key)"
        )
    return baseline


def tampering(baseline: Baseline) -> list[str]:
    """Where a baseline's verdicts disagree with its own totals or digest."""
    counts = Counter(category_of_id(i) for i in baseline.verdicts)
    if baseline.format == FIRST_FORMAT:  # only per-category scores were kept then
        recorded = {
            name: score.get("total")
            for name, score in baseline.categories.items()
            if isinstance(score, dict) and isinstance(score.get("total"), int)
        }
    else:
        recorded = {name: t.get("scored") for name, t in baseline.totals.items()}
    problems = [
        f"{name} has {counts.get(name, 0)} verdicts but recorded {total} scored"
        for name, total in sorted(recorded.items())
        if counts.get(name, 0) != total
    ]
    problems += [
        f"{name} has {n} verdicts but no recorded total"
        for name, n in sorted(counts.items())
        if name not in recorded
    ]
    checked = baseline.format != FIRST_FORMAT or baseline.digest is not None
    if checked and baseline.digest != verdicts_digest(baseline.verdicts, baseline.rates):
        problems.append("its verdicts do not match their recorded digest")
    stray = sorted(set(baseline.rates) - set(baseline.verdicts))
    if stray:
        problems.append(f"{len(stray)} pass rates have no verdict (first: {stray[0]})")
    wrong = sorted(
        i
        for i, (passes, samples) in baseline.rates.items()
        if not 0 <= passes <= samples
        or (i in baseline.verdicts and baseline.verdicts[i] != (passes == samples))
    )
    if wrong:
        problems.append(f"{len(wrong)} pass rates contradict their verdicts (first: {wrong[0]})")
    return problems


def incompatibilities(
    baseline: Baseline,
    metadata: dict[str, Any],
    declared: Iterable[str] = (),
    extra: dict[str, Any] | None = None,
) -> list[str]:
    """Why a baseline cannot be compared with this run, one line per difference (request
    settings ``declared`` changed on purpose left out)."""
    problems = []
    base_data = baseline.metadata.get("dataset", {})
    run_data = metadata.get("dataset", {})
    for key in ("version", "sha256"):
        if base_data.get(key) != run_data.get(key):
            problems.append(
                f"dataset {key} differs: baseline {base_data.get(key)!r}, this run "
                f"{run_data.get(key)!r}"
            )
    if baseline.metadata.get("mode") != metadata.get("mode"):
        problems.append(
            f"mode differs: baseline {baseline.metadata.get('mode')!r}, this run "
            f"{metadata.get('mode')!r}"
        )
    missing = sorted(
        set(metadata.get("categories", [])) - set(baseline.metadata.get("categories", []))
    )
    if missing:
        problems.append(f"categories not in the baseline: {', '.join(missing)}")
    return problems + stamp_differences(baseline, metadata, declared, extra)


def stamp_differences(
    baseline: Baseline,
    metadata: dict[str, Any],
    declared: Iterable[str] = (),
    extra: dict[str, Any] | None = None,
) -> list[str]:
    """The stamps that make verdicts comparable: the verdict rules, the request settings
    (:mod:`settings_change`; those ``declared`` changed on purpose are measured instead), the
    deviations from the leaderboard (``--bfcl-exact-call-text``), and enough samples per
    entry. ``extra``: the run's unmasked extra request fields, to check the baseline's digest.
    A baseline of the second format carries none of them and is taken as one sample under the
    first rules."""
    recorded = baseline.metadata
    problems = []
    rules = recorded.get("scoring_rules", 1)
    if rules != metadata.get("scoring_rules", 1):
        problems.append(
            f"scoring rules differ: baseline version {rules}, this run version "
            f"{metadata.get('scoring_rules')} (verdicts changed between them; record the "
            "baseline again with this version)"
        )
    problems += undeclared(setting_differences(recorded, metadata, extra), declared)
    before = recorded.get("leaderboard_deviations") or []
    now = metadata.get("leaderboard_deviations") or []
    if before != now:
        shown = [", ".join(map(str, d)) or "none" for d in (before, now)]
        problems.append(
            f"deviations from the leaderboard differ: baseline {shown[0]}, this run {shown[1]}"
        )
    asked = int(metadata.get("samples") or 1)
    if asked > baseline.samples:
        problems.append(
            f"samples differ: this run asks {asked} per entry, the baseline recorded "
            f"{baseline.samples} (record it with at least as many, or merge baselines)"
        )
    return problems + policy_differences(recorded, metadata)


def version_note(baseline: Baseline, metadata: dict[str, Any]) -> str | None:
    """A different plugin version alone changes no verdict (the rules version says when one
    does); the report notes it."""
    before, now = baseline.metadata.get("plugin_version"), metadata.get("plugin_version")
    if before and now and before != now:
        return f"baseline recorded with pytest-bfcl {before}, this run uses {now}"
    return None


def merge_baselines(baselines: list[Baseline]) -> dict[str, Any]:
    """One baseline from several recorded runs of the same model on the same data: each entry's
    passes and samples added up, so the gate compares with pass rates instead of one draw.
    Runs that do not fit each other (model, data, mode, rules, temperature, known-errors
    policy) are refused, and so is a run given twice."""
    if len(baselines) < 2:
        raise BaselineError("merging needs at least two baselines")
    first = baselines[0]
    for other in baselines[1:]:
        problems = [
            p
            for p in incompatibilities(other, first.metadata)
            if not p.startswith(("samples differ", "categories not in"))
        ]
        if problems or set(other.verdicts) != set(first.verdicts):
            why = "; ".join(problems) or "they scored different entries"
            raise BaselineError(f"these baselines cannot be merged: {why}")
    if refusals := merge_refusals(baselines):
        raise BaselineError(f"these baselines cannot be merged: {'; '.join(refusals)}")
    rates: dict[str, tuple[int, int]] = {}
    for baseline in baselines:
        for entry_id in baseline.verdicts:
            passes, samples = baseline.rate(entry_id)
            before = rates.get(entry_id, (0, 0))
            rates[entry_id] = (before[0] + passes, before[1] + samples)
    verdicts = {i: p == k for i, (p, k) in rates.items()}
    metadata = {
        **first.metadata,
        "samples": min(k for _, k in rates.values()),
        "merged_from": len(baselines),
        "run_id": None,
        "merged_runs": merged_runs(baselines),
    }
    expected = {name: t.get("expected", 0) for name, t in first.totals.items()}
    stores = [BaselineAnswers.of(b) for b in baselines]
    answers = None
    if any(b.answers is not None for b in baselines):
        answers = merged_answers(stores, [b.verdicts for b in baselines], verdicts)
    return baseline_data(verdicts, metadata, first.categories, expected or None, rates, answers)
