"""The files a run writes, by the option that names each, and the rule that keeps them apart
from one another and from the baseline the run reads."""

from __future__ import annotations

import os
from pathlib import Path

# The files a run writes, by the option that names each.
OUTPUT_OPTIONS = {
    "report_path": "--bfcl-report",
    "html_path": "--bfcl-html",
    "save_baseline_path": "--bfcl-save-baseline",
    "chart_path": "--bfcl-chart",
}


def output_conflict(baseline: Path | None, outputs: dict[str, Path | None]) -> str | None:
    """Why two of the run's files would be one (``None``: they are not): an output written over
    the baseline the run compares with (a failing run would lose its reference), or two outputs
    at one path (one would replace the other). ``outputs``: settings name -> path."""
    taken: dict[str, Path] = {}
    for name, path in outputs.items():
        if path is None:
            continue
        flag = OUTPUT_OPTIONS[name]
        if baseline is not None and _same_place(path, baseline):
            return (
                f"{flag} {path} is the baseline this run compares with (--bfcl-baseline); "
                "write to another path, or record without comparing (--bfcl-baseline=)"
            )
        for other_flag, other in taken.items():
            if _same_place(path, other):
                return f"{other_flag} and {flag} both name {path}; give each its own file"
        taken[flag] = path
    return None


def _same_place(one: Path, other: Path) -> bool:
    """Whether two paths name one file (links resolved; neither needs to exist yet)."""
    return os.path.realpath(one) == os.path.realpath(other)
