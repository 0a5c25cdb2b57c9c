"""pytest-bfcl against the official harness, whole processes, on the same work.

    python benchmarks/compare_reference.py [RESULT_MODEL_DIR] [--rounds 3] [--model NAME]
        [--env user|dev]
    python benchmarks/compare_reference.py --generation [--rounds 1]

Scoring (the default): RESULT_MODEL_DIR is a model directory in the reference's result layout
(default: the shared corpus v0, 4,441 results of which 2,675 fail). The official evaluator
(``bfcl evaluate`` of the pinned ``bfcl-eval``) runs in the conformance tool's virtualenv
(built once, several minutes, about 2 GB); pytest-bfcl runs as a user would, ``pytest
--bfcl-model=replay:DIR`` from an empty directory outside the repository, with the default
output, with ``--tb=no`` and with ``-n 2``. Also timed: importing the plugin, collecting
every scored entry with the oracle, and pytest alone on as many items that do nothing, with
and without ``-n 2`` (the floor any plugin's run stands on).

Generation (``--generation``): one simulated OpenAI-compatible server in its own process
(``testing/fake_openai.py``: the ground truth after 100 ms, any number of requests at once,
keep-alive, no Nagle delay) per row set; first its floor, the same number of requests from a
minimal client; then ``bfcl generate`` (its plain OpenAI-compatible chat handler with native
tool calls, 32 threads) and ``pytest --bfcl-model`` (concurrency 32, no cache), on
simple_python + multi_turn_base (600 entries) and on every single-turn and multi-turn entry
(4,441). Reported: wall time, requests, the ideal (requests x 100 ms / 32), ratios, peak RSS.

Rounds alternate between the two harnesses (the machine's load changes over time); each row
reports the median and the fastest round, and ratios are taken from the medians. Beside the
wall time, the CPU seconds (user + system) of each whole process tree (the evaluator's and
pytest's, xdist's workers included), with their range and the ratio to the official
evaluator's of the same round (the target: at most 0.5x with the default output); on a
machine shared with other work CPU time holds where wall time does not. In scoring, pytest
runs from the environment a team's CI installs (:mod:`user_env`: the package with its ``ci``
extra, this checkout's code first on the path); ``--env dev`` runs it from this interpreter's,
development tools and their pytest plugins included. ``--row`` keeps only
the rows whose names contain it (the official evaluator's is always kept). This is a
measurement script, not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from generation import (
    CONCURRENCY,
    LATENCY_S,
    RunFigures,
    request_bodies,
    run_official,
    run_ours,
    server_floor,
    simulated_server,
)
from user_env import ENVS, python_for, run_env

from pytest_bfcl.conformance.reference import ensure_venv, handler_key_names, run_reference
from pytest_bfcl.dataset.categories import CATEGORIES, expand_categories
from pytest_bfcl.dataset.fetch import ensure_pinned_data
from pytest_bfcl.dataset.layout import ResultLayout

REPO = Path(__file__).resolve().parents[1]
# the shared corpus beside the repository (or beside the folder of its worktrees)
DEFAULT_RESULTS = (
    next(
        (p / "shared" for p in REPO.parents[:2] if (p / "shared" / "reference").is_dir()),
        REPO.parent / "shared",
    )
    / "reference/corpus/v0/gpt-4.1-2025-04-14-FC"
)
DEFAULT_MODEL = "gpt-4.1-2025-04-14-FC"
# The interpreter pytest runs with in scoring, and its environment (main sets them from --env).
PYTHON = Path(sys.executable)
ENV: dict[str, str] | None = None


def categories_in(model_dir: Path) -> list[str]:
    """The categories that have a result file in the directory."""
    layout = ResultLayout(model_dir)
    return [name for name in CATEGORIES if layout.category_file(name).is_file()]


def children_cpu() -> float:
    """CPU seconds (user + system) of every process this one has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, check=False)
    return time.perf_counter() - started


def ours(model_dir: Path, categories: list[str], *extra: str) -> Callable[[], float]:
    def run() -> float:
        with tempfile.TemporaryDirectory() as workdir:
            command = [
                str(PYTHON), "-m", "pytest", "-p", "no:cacheprovider",
                f"--bfcl-model=replay:{model_dir}", f"--bfcl-category={','.join(categories)}",
                "--rootdir", workdir, workdir, *extra,
            ]  # fmt: skip
            return wall(command, Path(workdir))

    return run


def official(model_dir: Path, categories: list[str], model: str) -> Callable[[], float]:
    python = ensure_venv(progress=lambda line: print(line, file=sys.stderr))
    unpacked = ensure_pinned_data().unpacked_root
    assert unpacked is not None
    keys = handler_key_names(unpacked)  # placeholders: its handlers want keys to start

    def run() -> float:
        with tempfile.TemporaryDirectory() as root:
            started = time.perf_counter()
            reference = run_reference(
                python, Path(root), model_dir, model, categories, key_names=keys
            )
            if reference.returncode != 0:
                print(f"official evaluator: exit {reference.returncode}", file=sys.stderr)
            return time.perf_counter() - started

    return run


def plugin_import() -> float:
    code = "import time; t = time.perf_counter(); import pytest_bfcl.plugin; "
    code += "print(time.perf_counter() - t)"
    done = subprocess.run([str(PYTHON), "-c", code], env=ENV, capture_output=True, text=True)
    return float(done.stdout.strip())


def collect_all() -> float:
    with tempfile.TemporaryDirectory() as workdir:
        command = [
            str(PYTHON), "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
            "--bfcl-model=oracle", "--rootdir", workdir, workdir,
        ]  # fmt: skip
        return wall(command, Path(workdir))


def scored_counts(model_dir: Path, categories: list[str]) -> tuple[int, int]:
    """How many entries the run scores and how many of them fail (from the summary line of a
    ``--tb=no`` run)."""
    with tempfile.TemporaryDirectory() as workdir:
        command = [
            str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no",
            f"--bfcl-model=replay:{model_dir}", f"--bfcl-category={','.join(categories)}",
            "--rootdir", workdir, workdir,
        ]  # fmt: skip
        done = subprocess.run(command, cwd=workdir, env=ENV, capture_output=True, text=True)
    summary = done.stdout.strip().splitlines()[-1]
    counts = {word: int(number) for number, word in re.findall(r"(\d+) (\w+)", summary)}
    failing = counts.get("failed", 0)
    return failing + counts.get("passed", 0) + counts.get("xfailed", 0), failing


def pytest_floor(items: int, *extra: str) -> Callable[[], float]:
    """pytest itself on the same number of items that do nothing and pass: what running and
    reporting that many items costs before any plugin does any work, with or without xdist.
    (Failing items would cost pytest more than BFCL's do: its failure sections grow with the
    failures, and pytest-bfcl prints its own failure list instead.)"""

    def run() -> float:
        with tempfile.TemporaryDirectory() as workdir:
            (Path(workdir) / "test_floor.py").write_text(
                "import pytest\n\n\n"
                f"@pytest.mark.parametrize('i', range({items}))\n"
                "def test_item(i):\n"
                "    pass\n"
            )
            command = [
                str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:bfcl",
                "--rootdir", workdir, workdir, *extra,
            ]  # fmt: skip
            return wall(command, Path(workdir))

    return run


GENERATION_SETS = {
    "600 entries": ["simple_python", "multi_turn_base"],
    "4,441 entries": expand_categories("single_turn") + expand_categories("multi_turn"),
}


def generation(rounds: int) -> None:
    """Both harnesses generating against the same simulated server."""
    python = ensure_venv(progress=lambda line: print(line, file=sys.stderr))
    rows: dict[str, list[RunFigures]] = {}
    floors: dict[str, float] = {}
    for name, categories in GENERATION_SETS.items():
        with simulated_server(categories) as url:
            for round_ in range(rounds):
                with tempfile.TemporaryDirectory() as root:
                    run = run_official(python, url, categories, Path(root))
                rows.setdefault(f"official bfcl generate, {name}", []).append(run)
                for label, extra in (("", ()), (", -n 2", ("-n", "2"))):
                    with tempfile.TemporaryDirectory() as workdir:
                        run = run_ours(url, categories, Path(workdir), *extra)
                    rows.setdefault(f"pytest-bfcl{label}, {name}", []).append(run)
                print(f"round {round_ + 1}: {name} done", file=sys.stderr)
            requests = rows[f"pytest-bfcl, {name}"][0].requests
            floors[name] = server_floor(url, request_bodies(categories), requests)
    print(f"\n{'':42} {'wall s':>7} {'requests':>8} {'ideal s':>7} {'x ideal':>7} {'peak MB':>7}")
    for name, runs in rows.items():
        run = sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]  # the median round
        print(
            f"{name:42} {run.wall_s:7.2f} {run.requests:8} {run.ideal_s():7.2f} "
            f"{run.ratio():7.3f} {run.peak_rss_mb:7.0f}"
        )
    for name, floor in floors.items():
        requests = rows[f"pytest-bfcl, {name}"][0].requests
        ideal = requests * LATENCY_S / CONCURRENCY
        print(f"{'server floor (minimal client), ' + name:42} {floor:7.2f} {requests:8} "
              f"{ideal:7.2f} {floor / ideal:7.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the registry name to score as")
    parser.add_argument("--generation", action="store_true", help="compare generation")
    parser.add_argument("--row", action="append", default=[], help="rows to keep (substring)")
    parser.add_argument("--env", choices=ENVS, default="user", help="where pytest scores from")
    args = parser.parse_args()
    if args.generation:
        generation(args.rounds)
        return
    global PYTHON, ENV
    PYTHON, ENV = python_for(args.env), run_env(str(REPO))
    print(f"pytest from {PYTHON} ({args.env} environment)", file=sys.stderr)
    model_dir = args.results.resolve()
    categories = categories_in(model_dir)
    items, failing = scored_counts(model_dir, categories)
    rows: dict[str, Callable[[], float]] = {
        "official bfcl evaluate": official(model_dir, categories, args.model),
        "pytest-bfcl, default output": ours(model_dir, categories),
        "pytest-bfcl, --tb=no": ours(model_dir, categories, "--tb=no"),
        "pytest-bfcl, -n 2": ours(model_dir, categories, "-n", "2"),
        "pytest alone, as many passing items": pytest_floor(items),
        "pytest alone, as many passing items, -n 2": pytest_floor(items, "-n", "2"),
        "import pytest_bfcl.plugin": plugin_import,
        "collect every scored entry (oracle)": collect_all,
    }
    if args.row:
        rows = {
            name: run
            for name, run in rows.items()
            if name.startswith("official") or any(r in name for r in args.row)
        }
    times: dict[str, list[float]] = {name: [] for name in rows}
    cpus: dict[str, list[float]] = {name: [] for name in rows}
    for round_ in range(args.rounds):
        for name, run in rows.items():
            cpu = children_cpu()
            times[name].append(run())
            cpus[name].append(children_cpu() - cpu)
            print(f"round {round_ + 1}: {name}: {times[name][-1]:.2f} s, CPU "
                  f"{cpus[name][-1]:.2f} s", file=sys.stderr)  # fmt: skip
    reference = statistics.median(times["official bfcl evaluate"])
    official_cpu = cpus["official bfcl evaluate"]
    print(f"\n{len(categories)} categories from {model_dir} ({items} entries, {failing} "
          f"failing), {args.rounds} rounds")  # fmt: skip
    print(f"{'':44} {'median':>8} {'fastest':>8} {'vs official':>12} {'CPU s':>12} "
          f"{'CPU vs official, per round':>40}")  # fmt: skip
    for name, values in times.items():
        median = statistics.median(values)
        ratio = f"{median / reference:.2f}x" if "pytest-bfcl," in name else ""
        cpu = cpus[name]
        cpu_range = f"{min(cpu):.2f}-{max(cpu):.2f}" if name != "import pytest_bfcl.plugin" else ""
        cpu_ratio = ""
        if "pytest-bfcl," in name:
            per_round = sorted(c / o for c, o in zip(cpu, official_cpu, strict=True))
            cpu_ratio = (
                f"{per_round[0]:.2f}-{per_round[-1]:.2f}x "
                f"(median {statistics.median(per_round):.2f}x)"
            )
        print(f"{name:44} {median:8.2f} {min(values):8.2f} {ratio:>12} {cpu_range:>12} "
              f"{cpu_ratio:>40}")  # fmt: skip


if __name__ == "__main__":
    main()
