"""Speed benchmarks (run with ``pytest benchmarks``; not part of the test suite).

- Collecting every scored entry (5,106 items) must take under 1.5 s on a 2-core machine,
  dataset parsing included.
- Scoring throughput of the single-turn checkers (oracle outputs, 3,641 entries).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path

import pytest

from pytest_bfcl.dataset.categories import SINGLE_TURN
from pytest_bfcl.dataset.fetch import ensure_pinned_data
from pytest_bfcl.models.base import Generation
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.settings import Settings

COLLECTION_TARGET_S = 1.5


def collect(categories: str) -> float:
    """Wall time of an in-process ``pytest --collect-only`` of the BFCL items."""
    data = ensure_pinned_data().data_dir
    empty = Path(tempfile.mkdtemp(prefix="pytest-bfcl-bench-"))  # no other tests to collect
    args = [
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
        "--bfcl-model=oracle",
        f"--bfcl-category={categories}",
        f"--bfcl-data={data}",
        "-m",
        "bfcl",
        f"--rootdir={empty}",
        str(empty),
    ]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(args)
    elapsed = time.perf_counter() - start
    assert code == 0
    return elapsed


def test_collect_all_scoring_entries(benchmark):
    elapsed = benchmark.pedantic(collect, args=("all_scoring",), rounds=3, iterations=1)
    assert elapsed < COLLECTION_TARGET_S, f"collection took {elapsed:.2f}s"


def test_collect_all_entries_with_format_sensitivity(benchmark):
    benchmark.pedantic(collect, args=("all",), rounds=3, iterations=1)


def test_score_single_turn_oracle(benchmark):
    run = BfclRun.create(Settings(model="oracle", categories=list(SINGLE_TURN)))
    generations = [
        g
        for category in SINGLE_TURN
        for e in run.dataset.entries(category)
        if isinstance(g := run.generate(e.id), Generation)
    ]

    def score_all() -> int:
        return sum(run.score(g).valid for g in generations)

    valid = benchmark.pedantic(score_all, rounds=3, iterations=1)
    assert valid == len(generations) - 18
