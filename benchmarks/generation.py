"""Shared by the generation benchmarks: a simulated server in its own process, the floor it
allows (a minimal client), and whole-process runs of pytest-bfcl and of the official
``bfcl generate`` against it, with their wall time, requests and peak memory.

The server is ``testing/fake_openai.py``: it answers every chat request with the ground truth
after a fixed latency, any number at once, over keep-alive connections with Nagle's delay off.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
LATENCY_S = 0.1
CONCURRENCY = 32


@dataclass(frozen=True)
class RunFigures:
    """One whole process: seconds from start to exit, the chat requests the server answered
    meanwhile, and the process's peak resident memory."""

    wall_s: float
    requests: int
    peak_rss_mb: float
    cpu_s: float  # user + system time of the process
    returncode: int
    output: str = ""

    def ideal_s(self, latency: float = LATENCY_S, concurrency: int = CONCURRENCY) -> float:
        """Every request waits ``latency``, ``concurrency`` at a time, and nothing else."""
        return self.requests * latency / concurrency

    def ratio(self, latency: float = LATENCY_S, concurrency: int = CONCURRENCY) -> float:
        return self.wall_s / self.ideal_s(latency, concurrency)


@contextmanager
def simulated_server(
    categories: Sequence[str],
    latency: float = LATENCY_S,
    mode: str = "fc",
    options: Sequence[str] = (),
) -> Iterator[str]:
    """The base URL (``.../v1``) of a simulated server for these categories, in its own
    process for the duration; ``options``: the server's own (``--capacity N``, faults)."""
    server = [sys.executable, "-m", "pytest_bfcl.testing.fake_openai"]
    command = [*server, ",".join(categories), str(latency), mode, *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.kill()
        process.wait()


def server_stats(base_url: str) -> dict[str, Any] | None:
    """The server's counters (requests, first request, last answer), or None when it no
    longer answers (a replica that died)."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", "/stats")
        return dict(json.loads(connection.getresponse().read()))
    except OSError:
        return None
    finally:
        connection.close()


def served_requests(base_url: str) -> int:
    """Chat requests the server has answered so far."""
    stats = server_stats(base_url)
    assert stats is not None, f"the simulated server at {base_url} does not answer"
    return int(stats["requests"])


def request_bodies(categories: Sequence[str], model: str = "bench-model") -> list[bytes]:
    """A first request of every single-turn entry of these categories, as the server knows
    them (for the floor: what the server costs with a client that costs nothing)."""
    from pytest_bfcl.dataset.categories import CATEGORIES, Kind
    from pytest_bfcl.dataset.fetch import ensure_pinned_data
    from pytest_bfcl.kinds import open_dataset

    dataset = open_dataset(ensure_pinned_data())
    bodies = []
    for category in categories:
        if CATEGORIES[category].kind is Kind.MULTI_TURN:
            continue
        for entry in dataset.entries(category):
            messages = [m.model_dump() for m in entry.question[0]]
            bodies.append(json.dumps({"model": model, "messages": messages}).encode())
    return bodies


def server_floor(
    base_url: str, bodies: Sequence[bytes], requests: int, concurrency: int = CONCURRENCY
) -> float:
    """Seconds a minimal client (one thread and one keep-alive connection per slot, no
    parsing beyond reading the body) takes to have ``requests`` answered."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + "/chat/completions"
    lock = threading.Lock()
    remaining = [requests]

    def take() -> int | None:
        with lock:
            if remaining[0] == 0:
                return None
            remaining[0] -= 1
            return remaining[0]

    def client() -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        while (index := take()) is not None:
            body = bodies[index % len(bodies)]
            headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
            connection.request("POST", path, body=body, headers=headers)
            connection.getresponse().read()
        connection.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def timed_process(
    command: Sequence[str], cwd: Path, env: dict[str, str], base_url: str
) -> RunFigures:
    """Run a whole process; its peak RSS comes from the kernel's accounting of that child."""
    before = served_requests(base_url)
    started = time.perf_counter()
    process = subprocess.Popen(
        list(command), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert process.stdout is not None
    output = process.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return RunFigures(
        wall_s=wall,
        requests=served_requests(base_url) - before,
        peak_rss_mb=usage.ru_maxrss / 1024,  # kilobytes on Linux
        cpu_s=usage.ru_utime + usage.ru_stime,
        returncode=process.returncode,
        output=output,
    )


def run_ours(
    base_url: str,
    categories: Sequence[str],
    workdir: Path,
    *extra: str,
    concurrency: int = CONCURRENCY,
) -> RunFigures:
    """``pytest --bfcl-model=...`` as a user runs it: from a directory outside the repository,
    no cache, default output."""
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "--bfcl-model=bench-model", f"--bfcl-base-url={base_url}",
        f"--bfcl-category={','.join(categories)}", "--bfcl-no-cache",
        f"--bfcl-concurrency={concurrency}", "--rootdir", str(workdir), str(workdir), *extra,
    ]  # fmt: skip
    env = dict(os.environ)
    if os.environ.get("BFCL_BENCH_PYTHONPATH"):  # another checkout, to compare versions
        env["PYTHONPATH"] = os.environ["BFCL_BENCH_PYTHONPATH"]
    return timed_process(command, workdir, env, base_url)


# The official harness's model for this comparison: its plain OpenAI-compatible chat handler
# with native tool calls, which honours OPENAI_BASE_URL (run without starting a local server).
OFFICIAL_MODEL = "openbmb/MiniCPM-SALA-FC"


def run_official(
    python: Path,
    base_url: str,
    categories: Sequence[str],
    project_root: Path,
    threads: int = CONCURRENCY,
) -> RunFigures:
    """``bfcl generate`` of the pinned official harness (in its own virtualenv) against the
    same server, with as many threads as our concurrency."""
    from pytest_bfcl.conformance.reference import evaluator_env

    command = [
        str(python), "-m", "bfcl_eval", "generate", "--model", OFFICIAL_MODEL,
        "--test-category", ",".join(categories), "--num-threads", str(threads),
        "--skip-server-setup", "--allow-overwrite",
    ]  # fmt: skip
    env = evaluator_env(project_root)
    env.update({"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "placeholder"})
    return timed_process(command, project_root, env, base_url)
