"""What the report files add to scoring stored results (``pytest benchmarks/test_report_cost.py
-s``; about a minute). Not part of the test suite.

Whole processes from a directory outside the repository (``report_cost.run_once``), 4,441
stored results of the shared corpus, plain (``--tb=no``) and with junit + JSON + HTML, five
rounds taking turns so machine noise hits both alike.

Target: junit + JSON + HTML add at most 15 % of wall time (median to median), with the same
pass/fail counts.
"""

from __future__ import annotations

import statistics

import pytest
from report_cost import CORPUS, VARIANTS, run_once

ROUNDS = 5
TARGET = 1.15


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_reports_add_at_most_fifteen_percent() -> None:
    category = "single_turn,multi_turn"
    run_once(CORPUS, category, VARIANTS["plain"])  # bytecode written once, as installed
    walls: dict[str, list[float]] = {"plain": [], "all-reports": []}
    counts: dict[str, set[str]] = {"plain": set(), "all-reports": set()}
    for _ in range(ROUNDS):
        for name in walls:
            wall, _, summary = run_once(CORPUS, category, VARIANTS[name])
            walls[name].append(wall)
            counts[name].add(summary)
    plain, reports = (statistics.median(walls[name]) for name in ("plain", "all-reports"))
    print(f"plain {plain:.2f} s, junit + JSON + HTML {reports:.2f} s: {reports / plain:.3f}x")
    assert counts["plain"] == counts["all-reports"] and len(counts["plain"]) == 1
    assert reports / plain <= TARGET
