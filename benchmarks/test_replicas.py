"""Several replicas of one server (run with ``pytest benchmarks/test_replicas.py -s``).

Each replica is a simulated OpenAI-compatible server in its own process that answers 8
requests at once after a fixed latency and queues the rest (as a server with a fixed batch
does). A real pytest session (a subprocess from a directory outside the repository, no cache,
concurrency 32) runs against them.

Reported per scenario: requests, wall time of the whole process, the generation window (first
request to last answer, as the servers saw it: startup excluded), the ideal (requests over the
replicas' combined capacity), both efficiencies (ideal / time), and errors. Targets: two uneven
replicas >= 0.85 of the ideal (startup excluded; and with it, at about 4,000 requests); equal
replicas >= 0.9 with startup excluded, and >= 0.85 with it at about 4,000 requests; a replica
that dies mid-run costs no errors.
``BFCL_BENCH_PYTHONPATH`` runs the session on another checkout (to compare versions).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from generation import server_stats, simulated_server

from pytest_bfcl.dataset.categories import expand_categories

CAPACITY = 8  # requests each simulated server answers at once
CONCURRENCY = 32
SMALL = ["simple_python", "multiple", "parallel"]  # 800 single-turn requests
LARGE = expand_categories("single_turn")  # 3,641 single-turn requests

# name -> (categories, latency of each replica, per replica: "die:N" (the process exits after N
# requests) or "stall:N" (it stops answering after N requests, connections left open), targets)
SCENARIOS: dict[str, tuple[list[str], list[float], list[str | None], dict[str, float]]] = {
    "one-100ms": (SMALL, [0.1], [None], {}),
    "two-100ms": (SMALL, [0.1, 0.1], [None, None], {"window": 0.9}),
    "uneven-100-300ms": (SMALL, [0.1, 0.3], [None, None], {"window": 0.85}),
    "one-dies": (SMALL, [0.1, 0.1], [None, "die:100"], {}),
    "one-stalls": (SMALL, [0.1, 0.1], [None, "stall:100"], {}),
    "two-100ms-large": (LARGE, [0.1, 0.1], [None, None], {"window": 0.9, "wall": 0.85}),
    "uneven-100-300ms-large": (LARGE, [0.1, 0.3], [None, None], {"window": 0.85, "wall": 0.85}),
}


def start_replica(
    stack: ExitStack, categories: list[str], latency: float, fault: str | None
) -> str:
    options = ["--capacity", str(CAPACITY)]
    if fault:
        kind, count = fault.split(":")
        options += [f"--{kind}-after", count]
    return stack.enter_context(simulated_server(categories, latency, options=options))


def run_session(urls: list[str], categories: list[str], workdir: Path) -> tuple[float, float, str]:
    """Wall seconds of the whole process, the time.time() it started at, and its output."""
    env = dict(os.environ)
    if os.environ.get("BFCL_BENCH_PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["BFCL_BENCH_PYTHONPATH"]
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "--bfcl-model=bench-model", *(f"--bfcl-base-url={u}" for u in urls),
        f"--bfcl-category={','.join(categories)}", "--bfcl-no-cache",
        f"--bfcl-concurrency={CONCURRENCY}", f"--bfcl-report={workdir / 'report.json'}",
        "--rootdir", str(workdir), str(workdir),
    ]  # fmt: skip
    started, epoch = time.perf_counter(), time.time()
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True)
    return time.perf_counter() - started, epoch, done.stdout + done.stderr


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_replicas(name: str, tmp_path: Path) -> None:
    categories, latencies, faults, targets = SCENARIOS[name]
    with ExitStack() as stack:
        urls = [
            start_replica(stack, categories, latency, fault)
            for latency, fault in zip(latencies, faults, strict=True)
        ]
        wall, epoch, output = run_session(urls, categories, tmp_path)
        stats = [server_stats(url) for url in urls]
    report = json.loads((tmp_path / "report.json").read_text())
    replicas = report["usage"].get("replicas", [])  # absent before per-replica reports
    requests = report["usage"]["model_queries"]  # answered requests (one per entry here)
    live = [s for s in stats if s]
    first = min(s["first_request"] for s in live)
    window = max(s["last_answer"] for s in live) - first
    capacity = sum(CAPACITY / lat for lat in latencies)
    ideal = requests / capacity
    errors = int(m.group(1)) if (m := re.search(r"(\d+) errors? in", output)) else 0
    figures = {
        "requests": requests,
        "wall_s": round(wall, 2),
        "window_s": round(window, 2),
        "before_first_request_s": round(first - epoch, 2),
        "ideal_s": round(ideal, 2),
        "wall_efficiency": round(ideal / wall, 3),
        "window_efficiency": round(ideal / window, 3),
        "errors": errors,
        "per_replica": [r["requests"] for r in replicas],
    }
    print(f"\n{name}: {json.dumps(figures)}")
    assert errors == 0, output[-3000:]
    if "window" in targets:
        assert ideal / window >= targets["window"], figures
    if "wall" in targets:
        assert ideal / wall >= targets["wall"], figures
