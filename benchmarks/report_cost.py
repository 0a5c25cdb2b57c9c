"""What the report files and pytest-xdist add to scoring stored results, whole processes as a
user runs them (a script, not part of the test suite).

    python benchmarks/report_cost.py [--results DIR] [--category C] [--rounds N]
        [--variant NAME ...]

Each round runs every variant once, in turn, so machine noise hits them alike; the table gives
each variant's minimum and median wall time and its ratio to the first variant (the plain run,
``--tb=no`` and no reports), minimum to minimum and median to median. Runs start from a fresh
directory outside the repository with ``-p no:cacheprovider``. ``BFCL_BENCH_PYTHONPATH`` points
the runs at another checkout, to compare versions.

Every variant's verdicts (the junit file's, or the JSON report's counts) are compared with the
first run's pass/fail counts, so a faster variant that scores differently is noticed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "reference" / "corpus" / "v0" / "gpt-4.1-2025-04-14-FC"

# name -> extra options; {out} is the run's own output directory.
VARIANTS: dict[str, list[str]] = {
    "plain": [],
    "junit": ["--junitxml={out}/junit.xml"],
    "json": ["--bfcl-report={out}/bfcl.json"],
    "html": ["--bfcl-html={out}/bfcl.html"],
    "all-reports": [
        "--junitxml={out}/junit.xml",
        "--bfcl-report={out}/bfcl.json",
        "--bfcl-html={out}/bfcl.html",
    ],
    "n2": ["-n", "2"],
    "n2-all-reports": [
        "-n",
        "2",
        "--junitxml={out}/junit.xml",
        "--bfcl-report={out}/bfcl.json",
        "--bfcl-html={out}/bfcl.html",
    ],
}
_SUMMARY = re.compile(r"(\d+) (failed|passed|xfailed|xpassed|skipped|errors?)")


def run_once(results: Path, category: str, extra: list[str]) -> tuple[float, str]:
    """(wall seconds, pytest's summary counts) of one whole process."""
    with tempfile.TemporaryDirectory(prefix="bfcl-bench-") as outside:
        args = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no",
            f"--bfcl-model=replay:{results}", f"--bfcl-category={category}",
            *(a.format(out=outside) for a in extra),
        ]  # fmt: skip
        env = dict(os.environ)
        if os.environ.get("BFCL_BENCH_PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["BFCL_BENCH_PYTHONPATH"]
        started = time.perf_counter()
        done = subprocess.run(args, cwd=outside, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    counts = ", ".join(f"{n} {w}" for n, w in _SUMMARY.findall(last))
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=CORPUS)
    parser.add_argument("--category", default="single_turn,multi_turn")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    args = parser.parse_args()
    names = args.variant or ["plain", "junit", "json", "html", "all-reports", "n2"]
    if names[0] != "plain":
        names.insert(0, "plain")
    times: dict[str, list[float]] = {name: [] for name in names}
    counts: dict[str, str] = {}
    for _ in range(args.rounds):
        for name in names:
            wall, summary = run_once(args.results, args.category, VARIANTS[name])
            times[name].append(wall)
            counts.setdefault(name, summary)
            if summary != counts["plain"]:
                raise SystemExit(f"{name} scored differently: {summary} vs {counts['plain']}")
    base_min, base_med = min(times["plain"]), statistics.median(times["plain"])
    print(f"{args.results} [{args.category}]: {counts['plain']}; {args.rounds} rounds")
    print(f"{'variant':<16} {'min s':>7} {'median s':>9} {'ratio min':>10} {'ratio median':>13}")
    for name in names:
        low, mid = min(times[name]), statistics.median(times[name])
        print(f"{name:<16} {low:7.2f} {mid:9.2f} {low / base_min:10.2f} {mid / base_med:13.2f}")


if __name__ == "__main__":
    main()
