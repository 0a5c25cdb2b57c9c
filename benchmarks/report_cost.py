"""What the report files and pytest-xdist add to scoring stored results, whole processes as a
user runs them (a script, not part of the test suite).

    python benchmarks/report_cost.py [--results DIR] [--category C] [--rounds N]
        [--variant NAME ...] [--option=PYTEST_OPTION ...] [--compare PYTHONPATH]

Stored results of 10,106 entries (every category but web search, format sensitivity
included) come from the oracle in prompt mode::

    pytest --bfcl-model=oracle --bfcl-mode=prompt --bfcl-category=all --bfcl-web=off \\
        --bfcl-results-dir=/tmp/oracle-prompt
    python benchmarks/report_cost.py --results /tmp/oracle-prompt/oracle --category all \\
        --option=--bfcl-mode=prompt --option=--bfcl-web=off

Each round runs every variant once, in turn, so machine noise hits them alike; the table gives
each variant's minimum and median and its ratio to the plain run (``--tb=no``, no reports) of
the same checkout, minimum to minimum and median to median. Runs start from a fresh
directory outside the repository with ``-p no:cacheprovider``. ``BFCL_BENCH_PYTHONPATH`` points
the runs at another checkout; ``--compare PYTHONPATH`` runs every variant on a second checkout
too, interleaved with the first (before and after a change, side by side). CPU time (user +
system, workers included) is reported beside wall time: on a shared machine it moves less.

Every run's pass/fail counts are compared with the first run's, so a faster variant that
scores differently is noticed.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
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


def run_once(
    results: Path,
    category: str,
    extra: list[str],
    pythonpath: str | None = None,
    options: tuple[str, ...] = (),
) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process and its children, pytest's summary counts)
    of one whole process."""
    with tempfile.TemporaryDirectory(prefix="bfcl-bench-") as outside:
        args = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no",
            f"--bfcl-model=replay:{results}", f"--bfcl-category={category}",
            *options, *(a.format(out=outside) for a in extra),
        ]  # fmt: skip
        env = dict(os.environ)
        # As installed: modules compiled once, not on every start (and by every xdist worker).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if pythonpath is not None:
            env["PYTHONPATH"] = pythonpath
        before = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run(args, cwd=outside, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        cpu = _children_cpu() - before
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    counts = ", ".join(f"{n} {w}" for n, w in _SUMMARY.findall(last))
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, cpu, counts


def _children_cpu() -> float:
    """User + system seconds of the finished children (xdist workers included): less
    sensitive than wall time to other work on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=CORPUS)
    parser.add_argument("--category", default="single_turn,multi_turn")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        help="a pytest option for every run (--option=--bfcl-mode=prompt)",
    )
    parser.add_argument(
        "--compare",
        metavar="PYTHONPATH",
        help="also run every variant on this other checkout (as 'VARIANT@other')",
    )
    args = parser.parse_args()
    names = args.variant or ["plain", "junit", "json", "html", "all-reports", "n2"]
    if names[0] != "plain":
        names.insert(0, "plain")
    own = os.environ.get("BFCL_BENCH_PYTHONPATH")
    runs = [(name, own) for name in names]
    if args.compare:
        runs += [(f"{name}@other", args.compare) for name in names]
    walls: dict[str, list[float]] = {label: [] for label, _ in runs}
    cpus: dict[str, list[float]] = {label: [] for label, _ in runs}
    counts: dict[str, str] = {}
    for _, path in runs[:: len(names)]:  # a first run of each checkout writes its bytecode
        run_once(args.results, args.category, VARIANTS["plain"], path, tuple(args.option))
    for _ in range(args.rounds):
        for label, path in runs:
            options = VARIANTS[label.split("@")[0]]
            wall, cpu, summary = run_once(
                args.results, args.category, options, path, tuple(args.option)
            )
            walls[label].append(wall)
            cpus[label].append(cpu)
            counts.setdefault("plain", summary)
            if summary != counts["plain"]:
                raise SystemExit(f"{label} scored differently: {summary} vs {counts['plain']}")
    print(f"{args.results} [{args.category}]: {counts['plain']}; {args.rounds} rounds")
    print(
        f"{'variant':<22} {'wall min':>9} {'median':>7} {'x plain':>12} "
        f"{'cpu min':>8} {'median':>7} {'x plain':>12}"
    )
    for label, _ in runs:
        base = "plain@other" if label.endswith("@other") else "plain"
        print(
            f"{label:<22} {_figures(walls[label], walls[base])} {_figures(cpus[label], cpus[base])}"
        )


def _figures(times: list[float], base: list[float]) -> str:
    """min, median, and both as ratios to the base's min and median."""
    low, mid = min(times), statistics.median(times)
    ratios = f"{low / min(base):.2f}/{mid / statistics.median(base):.2f}"
    return f"{low:9.2f} {mid:7.2f} {ratios:>12}"


if __name__ == "__main__":
    main()
