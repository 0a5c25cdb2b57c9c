"""A real router in front of replicas, started as a team would: two ``vllm serve`` stand-ins
(``pytest_bfcl/testing/stand_in_vllm.py``) and vllm-router with its ``consistent_hash`` policy
in front, the run pointed at the router alone. It scores every entry, and each conversation's
steps reach one replica: the router reads the session header the plugin sends with every step.
Skipped where vllm-router is not installed (``pip install vllm-router``; CI installs it)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from pytest_bfcl.servers.vllm_server import free_port

SERVED = "acme/tool-model-7b"
CATEGORY = "multi_turn_base"


def router_executable() -> str | None:
    """vllm-router on the PATH, or beside this Python (a virtualenv not activated)."""
    beside = Path(sys.executable).parent / "vllm-router"
    return shutil.which("vllm-router") or (str(beside) if beside.exists() else None)


pytestmark = pytest.mark.skipif(
    router_executable() is None, reason="vllm-router is not installed (pip install vllm-router)"
)


def get(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_until_healthy(
    port: int, process: subprocess.Popen, log: Path, seconds: float = 60
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            if get(port, "/health")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"nothing healthy on port {port}: {log.read_text()[-3000:]}")


@contextmanager
def started(command: list[str], port: int, log: Path, env: dict[str, str]) -> Iterator[int]:
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_until_healthy(port, process, log)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_a_run_through_vllm_router_keeps_each_conversation_on_one_replica(pytester, tmp_path):
    env = {**os.environ, "STANDIN_CATEGORIES": CATEGORY, "STANDIN_LATENCY": "0.01"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path.cwd()), env.get("PYTHONPATH")]))
    with ExitStack() as stack:
        replicas = []
        for index in range(2):  # as a team starts vLLM on each GPU: `vllm serve MODEL --port P`
            port = free_port()
            serve = [sys.executable, "-m", "pytest_bfcl.testing.stand_in_vllm", "serve", SERVED]
            command = [*serve, "--host", "127.0.0.1", "--port", str(port)]
            log = tmp_path / f"replica-{index}.log"
            replicas.append(stack.enter_context(started(command, port, log, env)))
        router = free_port()
        workers = [f"http://127.0.0.1:{port}" for port in replicas]
        command = [
            str(router_executable()), "--host", "127.0.0.1", "--port", str(router),
            "--worker-urls", *workers, "--policy", "consistent_hash",
        ]  # fmt: skip
        stack.enter_context(started(command, router, tmp_path / "router.log", env))
        result = pytester.runpytest(
            f"--bfcl-model={SERVED}",
            f"--bfcl-base-url=http://127.0.0.1:{router}/v1",
            f"--bfcl-category={CATEGORY}",
            "--bfcl-sample=16",
            "--bfcl-seed=5",
            "--bfcl-no-cache",
            "--bfcl-concurrency=8",
            "-p",
            "no:cacheprovider",
        )
        result.assert_outcomes(passed=16)
        seen = [json.loads(get(port, "/stats?sessions")[1])["sessions"] for port in replicas]
    # each replica's conversations, as it knows them from their content
    entries = [{entry for entry, _ in served} for served in seen]
    assert len(entries[0] | entries[1]) == 16  # every conversation reached a replica
    assert not entries[0] & entries[1]  # and only one
    assert all(entry == header for served in seen for entry, header in served)  # each named
