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
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.files import loads_bounded, read_regular_file, write_json_atomic

BASELINE_FORMAT = "pytest-bfcl-baseline/2"
# Read as well: the first format, checked against the per-category totals it kept.
LEGACY_FORMATS = ("pytest-bfcl-baseline/1",)


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

    def verdict(self, entry_id: str) -> bool | None:
        return self.verdicts.get(entry_id)

    @property
    def covered_categories(self) -> set[str]:
        return set(self.metadata.get("categories", [])) | set(self.totals)


def verdicts_digest(verdicts: dict[str, bool]) -> str:
    canonical = json.dumps(sorted(verdicts.items()), separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def save_baseline(
    path: Path,
    verdicts: dict[str, bool],
    metadata: dict[str, Any],
    categories: dict[str, Any],
    expected: dict[str, int] | None = None,
) -> None:
    """``expected``: the number of entries the run was asked to score, per category."""
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
        digest=verdicts_digest(verdicts),
    )
    write_json_atomic(path, baseline.model_dump(mode="json"))


def load_baseline(path: Path) -> Baseline:
    """A baseline from its file; every problem is a :class:`BaselineError` naming the file.
    Read bounded: at most 256 MiB (a full run's baseline is about 300 kB), nested at most 64
    deep (one is 4 deep), a regular file only."""
    try:
        raw = loads_bounded(read_regular_file(Path(path), 256 * 2**20).decode("utf-8"), 64)
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
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
    problems = tampering(baseline)
    if problems:
        raise BaselineError(
            f"baseline {path} does not add up: {'; '.join(problems)}. It was edited or cut "
            "short after it was recorded; record it again (--bfcl-save-baseline)."
        )
    return baseline


def tampering(baseline: Baseline) -> list[str]:
    """Where a baseline's verdicts disagree with its own totals or digest."""
    counts = Counter(category_of_id(i) for i in baseline.verdicts)
    if baseline.format in LEGACY_FORMATS:  # only per-category scores were kept then
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
    if baseline.format == BASELINE_FORMAT and baseline.digest != verdicts_digest(baseline.verdicts):
        problems.append("its verdicts do not match their recorded digest")
    return problems


def incompatibilities(baseline: Baseline, metadata: dict[str, Any]) -> list[str]:
    """Why a baseline cannot be compared with this run, one line per difference."""
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
    return problems
