"""Instructions executed by whole process trees, counted by valgrind (cachegrind without its
cache simulation): a measure the machine's load does not move, for the ratios that the CPU-second
scripts (xdist_phases.py, compare_reference.py) report with a spread of a quarter on a shared
machine. A script, not part of the test suite; it needs valgrind, and runs about 13x slower
than the runs it counts (five minutes or so for everything).

    python benchmarks/instructions.py [RESULT_MODEL_DIR] [--env user|dev]
        [--checkout PATH ...] [--no-reference]

For this checkout (and each ``--checkout``): pytest-bfcl scoring the stored results from a
directory outside the repository, with ``--tb=no`` under ``-n 0`` and ``-n 2``, and with the
default output; once, the official evaluator (``bfcl evaluate`` of the pinned release) on the
same directory. Printed: each run's instructions (per process for ``-n 2``), ``-n 2`` over
``-n 0`` (the target: at most 1.5) and the default output over the official evaluator's (at
most 0.5). Instructions are not seconds: the same count runs faster where it waits less on
memory, so these ratios stand beside the CPU seconds, not in their place.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from compare_reference import DEFAULT_MODEL, DEFAULT_RESULTS, categories_in
from user_env import ENVS, python_for, run_env

from pytest_bfcl.conformance.reference import ensure_venv, handler_key_names, run_reference
from pytest_bfcl.dataset.fetch import ensure_pinned_data

HERE = Path(__file__).resolve().parent
VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes"]


def _counts(folder: Path) -> list[int]:
    """The instructions of each process cachegrind wrote a file for in ``folder``, largest
    first."""
    counts = []
    for path in folder.glob("cg.*"):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("summary:"):
                counts.append(int(line.split()[1]))
    return sorted(counts, reverse=True)


def _pytest_command(python: Path, results: Path, categories: list[str], *extra: str) -> list[str]:
    return [
        str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
        f"--bfcl-model=replay:{results}", f"--bfcl-category={','.join(categories)}", *extra,
    ]  # fmt: skip


def warm(python: Path, checkout: str, results: Path, categories: list[str]) -> None:
    """One run without valgrind, so that the checkout's bytecode is compiled before any
    counted run (every counted run of it then loads the same bytecode)."""
    with tempfile.TemporaryDirectory(prefix="bfcl-instructions-") as outside:
        command = _pytest_command(python, results, categories, "--tb=no")
        subprocess.run(command, cwd=outside, env=run_env(checkout), capture_output=True)


def ours(
    python: Path, checkout: str, results: Path, categories: list[str], *extra: str
) -> list[int]:
    """The instructions of each process of one pytest-bfcl run, from an empty directory."""
    with tempfile.TemporaryDirectory(prefix="bfcl-instructions-") as outside:
        folder = Path(outside) / "counts"
        folder.mkdir()
        counted = [
            *VALGRIND, f"--cachegrind-out-file={folder}/cg.%p",
            *_pytest_command(python, results, categories, *extra),
        ]  # fmt: skip
        subprocess.run(counted, cwd=outside, env=run_env(checkout), capture_output=True)
        return _counts(folder)


def official(results: Path, categories: list[str]) -> list[int]:
    """The instructions of each process of one ``bfcl evaluate`` on the same results."""
    python = ensure_venv(progress=lambda line: print(line, file=sys.stderr))
    unpacked = ensure_pinned_data().unpacked_root
    assert unpacked is not None
    keys = handler_key_names(unpacked)  # placeholders: its handlers want keys to start
    with tempfile.TemporaryDirectory(prefix="bfcl-instructions-") as root:
        folder = Path(root) / "counts"
        folder.mkdir()
        # The evaluator is started through its Python: a wrapper runs that under valgrind.
        wrapper = Path(root) / "python-under-valgrind"
        command = " ".join([*VALGRIND, f"--cachegrind-out-file={folder}/cg.%p", str(python)])
        wrapper.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
        wrapper.chmod(0o755)
        for runner, name in ((python, "warm"), (wrapper, "counted")):
            project = Path(root) / name  # once without valgrind: bytecode compiled before
            project.mkdir()
            run_reference(runner, project, results, DEFAULT_MODEL, categories, key_names=keys)
        return _counts(folder)


def _g(count: int) -> str:
    return f"{count / 1e9:.2f} G"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--env", choices=ENVS, default="user", help="where pytest runs from")
    parser.add_argument("--checkout", action="append", default=[], help="another checkout")
    parser.add_argument("--no-reference", action="store_true", help="skip bfcl evaluate")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    python = python_for(args.env)
    results = args.results.resolve()
    categories = categories_in(results)
    reference = None if args.no_reference else sum(official(results, categories))
    print(f"pytest from {python} ({args.env} environment); {len(categories)} categories "
          f"from {results}")  # fmt: skip
    if reference is not None:
        print(f"official bfcl evaluate: {_g(reference)}")
    for checkout in [str(HERE.parent), *args.checkout]:
        warm(python, checkout, results, categories)
        one = ours(python, checkout, results, categories, "--tb=no", "-n", "0")
        two = ours(python, checkout, results, categories, "--tb=no", "-n", "2")
        default = ours(python, checkout, results, categories)
        per_process = ", ".join(_g(c) for c in two)
        print(f"{checkout}:")
        print(f"  -n 0: {_g(sum(one))}; -n 2: {_g(sum(two))} ({per_process}); "
              f"-n 2 / -n 0 = {sum(two) / sum(one):.3f}")  # fmt: skip
        line = f"  default output: {_g(sum(default))}"
        if reference is not None:
            line += f"; against the official evaluator {sum(default) / reference:.3f}"
        print(line)


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled once
    main()
