"""Where the time of ``-n 2`` goes when scoring stored results (a script, not part of the test
suite).

    python benchmarks/xdist_phases.py [--results DIR] [--category C] [--rounds N]
        [--checkout PATH ...] [--env user|dev]

Runs ``-n 0`` and ``-n 2`` in turn, whole processes from a fresh directory outside the
repository, with :mod:`phase_log` loaded in every process, and prints per process when it was
configured, had collected, saw its first and last report and was done (wall seconds from the
start of the command) and the CPU seconds it had used by then, for the round whose ``-n 2``
wall time was the median. From these: the start-up each worker pays before its first entry,
and the CPU per entry of the workers and of the controller against one process's.

Then the CPU seconds (user + system) of each whole process tree, the workers included, and
``-n 2`` over ``-n 0`` round by round (the target: at most 1.5x). The package run is this
checkout's (``BFCL_BENCH_PYTHONPATH`` names another); ``--checkout`` runs each round on other
checkouts too (this one first), in turn, so that their figures come from the same rounds of
a machine whose load changes. pytest runs from the environment a team's CI installs
(:mod:`user_env`: the package with its ``ci`` extra, nothing else); ``--env dev`` runs it from
this interpreter's, with the development tools' pytest plugins loaded in every process.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from user_env import ENVS, python_for, run_env

HERE = Path(__file__).resolve().parent
# the shared corpus beside the repository (or beside the folder of its worktrees)
CORPUS = (
    next(
        (p / "shared" for p in HERE.parents[1:3] if (p / "shared" / "reference").is_dir()),
        HERE.parent.parent / "shared",
    )
    / "reference/corpus/v0/gpt-4.1-2025-04-14-FC"
)
PHASES = ("configured", "collected", "first report", "last report", "done")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(
    python: Path, results: Path, category: str, workers: int, checkout: str | None = None
) -> tuple[float, list[list[str]], float]:
    """(wall seconds, the phase lines, CPU seconds of the process tree) of one whole process."""
    with tempfile.TemporaryDirectory(prefix="bfcl-phases-") as outside:
        log = Path(outside) / "phases.tsv"
        own = checkout or os.environ.get("BFCL_BENCH_PYTHONPATH") or str(HERE.parent)
        env = run_env(own, str(HERE))
        args = [
            str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "phase_log",
            "--tb=no", f"--bfcl-model=replay:{results}", f"--bfcl-category={category}",
            "-n", str(workers),
        ]  # fmt: skip
        started, cpu = time.time(), children_cpu()
        env.update(BFCL_PHASES_FILE=str(log), BFCL_PHASES_T0=repr(started))
        subprocess.run(args, cwd=outside, env=env, capture_output=True, check=False)
        wall, cpu = time.time() - started, children_cpu() - cpu
        lines = [line.split("\t") for line in log.read_text().splitlines()]
    return wall, lines, cpu


def table(lines: list[list[str]]) -> list[str]:
    by_role: dict[str, dict[str, tuple[float, float]]] = {}
    for role, phase, wall, cpu in lines:
        by_role.setdefault(role, {})[phase] = (float(wall), float(cpu))
    out = [f"{'process':<8}" + "".join(f"{p:>16}" for p in PHASES) + "   run CPU"]
    for role, phases in sorted(by_role.items()):
        cells = "".join(
            f"{phases[p][0]:>8.2f} ({phases[p][1]:4.2f})" if p in phases else f"{'':>16}"
            for p in PHASES
        )
        run_cpu = ""
        if "first report" in phases and "last report" in phases:
            run_cpu = f"{phases['last report'][1] - phases['first report'][1]:.2f}"
        out.append(f"{role:<8}{cells}   {run_cpu}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=CORPUS)
    parser.add_argument("--category", default="single_turn,multi_turn")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkout", action="append", default=[], help="another checkout")
    parser.add_argument("--env", choices=ENVS, default="user", help="where pytest runs from")
    args = parser.parse_args()
    python = python_for(args.env)
    print(f"pytest from {python} ({args.env} environment)")
    checkouts: list[str | None] = [None, *args.checkout]
    for checkout in checkouts:
        run(python, args.results, args.category, 0, checkout)  # bytecode written once
    rounds: dict[tuple[str | None, int], list[tuple[float, list[list[str]], float]]] = {
        (c, w): [] for c in checkouts for w in (0, 2)
    }
    for _ in range(args.rounds):
        for checkout in checkouts:
            for workers in (0, 2):
                rounds[checkout, workers].append(
                    run(python, args.results, args.category, workers, checkout)
                )
    for (checkout, workers), done in rounds.items():
        walls = sorted(wall for wall, _, _ in done)
        median = statistics.median(walls)
        _, lines, _ = min(done, key=lambda d: abs(d[0] - median))
        print(f"{checkout or 'this checkout'}, -n {workers}: wall min {walls[0]:.2f} s, "
              f"median {median:.2f} s")  # fmt: skip
        print("phase: wall seconds since the start (CPU seconds of that process)")
        print("\n".join(table(lines)))
        print()
    for checkout in checkouts:
        one = [cpu for _, _, cpu in rounds[checkout, 0]]
        two = [cpu for _, _, cpu in rounds[checkout, 2]]
        ratios = sorted(b / a for a, b in zip(one, two, strict=True))
        print(f"{checkout or 'this checkout'}: CPU of the process tree, -n 0 "
              f"{min(one):.2f}-{max(one):.2f} s, -n 2 {min(two):.2f}-{max(two):.2f} s; "
              f"-n 2 / -n 0 per round {ratios[0]:.2f}-{ratios[-1]:.2f}x "
              f"(median {statistics.median(ratios):.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
