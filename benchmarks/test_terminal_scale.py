"""The terminal at scale (run with ``pytest benchmarks``; not part of the test suite).

Scoring a whole corpus of stored results where most entries fail (4,441 entries, 2,675 failing,
the shared corpus v0) must print at most 3,000 lines, none over 500 characters, in at most 1.3
times the wall time of the same run with ``--tb=no`` (whole processes, from a directory outside
the repository, measured alternately in one run so machine noise hits both alike).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "reference" / "corpus" / "v0" / "gpt-4.1-2025-04-14-FC"
MAX_LINES = 3_000
MAX_LINE = 500
MAX_RATIO = 1.3
ROUNDS = 3


def _run(*extra: str) -> tuple[float, list[str]]:
    args = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--bfcl-model=replay:{CORPUS}",
        "--bfcl-category=single_turn,multi_turn", *extra,
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as outside:
        started = time.perf_counter()
        done = subprocess.run(args, cwd=outside, capture_output=True, text=True, timeout=900)
        elapsed = time.perf_counter() - started
    return elapsed, done.stdout.splitlines()


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the checkout")
def test_many_failures_print_a_bounded_log_quickly():
    default_times, quiet_times = [], []
    lines: list[str] = []
    for _ in range(ROUNDS):
        elapsed, lines = _run()
        default_times.append(elapsed)
        quiet_times.append(_run("--tb=no")[0])
    ratio = min(default_times) / min(quiet_times)
    print(
        f"\ndefault {min(default_times):.2f} s, --tb=no {min(quiet_times):.2f} s, "
        f"ratio {ratio:.2f}; {len(lines)} lines, longest {max(map(len, lines))}"
    )
    assert len(lines) <= MAX_LINES
    assert max(map(len, lines)) <= MAX_LINE
    assert ratio <= MAX_RATIO
