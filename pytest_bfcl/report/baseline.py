"""Baselines: the per-entry verdicts of a reference run, saved and compared against.

A baseline records the run's identity (model, mode, dataset release, categories, sample) so a
comparison on other data or another mode is refused instead of producing meaningless flips.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_bfcl.files import write_json_atomic

BASELINE_FORMAT = "pytest-bfcl-baseline/1"


class BaselineError(ValueError):
    """A baseline that cannot be read or does not fit this run."""


class Baseline(BaseModel):
    model_config = ConfigDict(frozen=True)

    format: str = BASELINE_FORMAT
    metadata: dict[str, Any]
    verdicts: dict[str, bool]  # entry id -> valid
    categories: dict[str, Any] = {}  # per-category scores at recording time (informational)

    def verdict(self, entry_id: str) -> bool | None:
        return self.verdicts.get(entry_id)


def save_baseline(
    path: Path, verdicts: dict[str, bool], metadata: dict[str, Any], categories: dict[str, Any]
) -> None:
    baseline = Baseline(
        metadata=metadata, verdicts=dict(sorted(verdicts.items())), categories=categories
    )
    write_json_atomic(path, baseline.model_dump(mode="json"))


def load_baseline(path: Path) -> Baseline:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {path} is not JSON: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("format") != BASELINE_FORMAT:
        raise BaselineError(
            f"{path} is not a pytest-bfcl baseline (expected format {BASELINE_FORMAT!r}, "
            f"got {raw.get('format') if isinstance(raw, dict) else type(raw).__name__!r})"
        )
    try:
        return Baseline.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise BaselineError(f"baseline {path} is malformed at {where}: {first['msg']}") from exc


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
