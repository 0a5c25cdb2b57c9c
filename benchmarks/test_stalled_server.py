"""How long a session takes to stop against a server that stalls (run with ``pytest benchmarks``).

A real pytest session (a subprocess, default settings: timeout 120 s, retries 4, concurrency 8)
runs ``live_simple`` (258 entries) against a local server that:

- ``silent``: answers GET /models (so the probe passes) but never answers a chat request;
- ``drip``: answers GET /models, then sends one byte a second of every chat answer, forever;
- ``silent-probe``: answers nothing at all (the probe before generation finds it).

Reported: seconds from start to the process's exit, and the lines of output (a stop is one
message, not hundreds of errors). Targets: a mid-run stop within about one timeout plus
back-off (under 200 s), the probe's within 30 s. ``BFCL_BENCH_PYTHONPATH`` runs the session
on another checkout (to compare with an earlier version); ``BFCL_BENCH_CAP_S`` caps a run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_bfcl.dataset.fetch import ensure_pinned_data
from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.testing.fake_openai import FakeOpenAI

CATEGORY = "live_simple"
CAP_S = float(os.environ.get("BFCL_BENCH_CAP_S", "900"))
SCENARIOS = {  # name -> (fault on every request, fault on chat requests, target seconds)
    "silent": (None, "silent", 200.0),
    "drip": (None, "drip", 200.0),
    "silent-probe": ("silent", None, 30.0),
}


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(open_dataset(ensure_pinned_data()), [CATEGORY]) as fake:
        yield fake


def session_until_exit(base_url: str, workdir: Path) -> tuple[float, int | None, str]:
    """Seconds until the session's process exits (or the cap), its exit code, its output."""
    env = dict(os.environ)
    if os.environ.get("BFCL_BENCH_PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["BFCL_BENCH_PYTHONPATH"]
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "--bfcl-model=bench-model", f"--bfcl-base-url={base_url}",
        f"--bfcl-category={CATEGORY}", "--bfcl-no-cache",
        "--rootdir", str(workdir), str(workdir),
    ]  # fmt: skip
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        output, _ = process.communicate(timeout=CAP_S)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        code = None
    return time.monotonic() - started, code, output


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_time_to_stop_against_a_stalled_server(benchmark, server, tmp_path, scenario):
    always, chat_fault, target = SCENARIOS[scenario]
    server.always, server.chat_fault = always, chat_fault

    def run() -> tuple[float, int | None, str]:
        return session_until_exit(server.base_url, tmp_path)

    elapsed, code, output = benchmark.pedantic(run, rounds=1, iterations=1)
    lines = len(output.splitlines())
    benchmark.extra_info.update(
        {"scenario": scenario, "stop_s": round(elapsed, 1), "exit": code, "output_lines": lines}
    )
    print(f"\n{scenario}: stopped after {elapsed:.1f} s (exit {code}), {lines} lines of output")
    print("\n".join(output.splitlines()[-6:]))
    assert code not in (None, 0)  # stopped, and not as a success
    assert elapsed < target
