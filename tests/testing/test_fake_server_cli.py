"""The local test server as a team runs it (``python -m pytest_bfcl.testing.fake_openai``, as
docs/test-server.md gives it): group names, both wire formats, its own port and model names,
and one clear line for a bad category."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import requests

pytestmark = pytest.mark.e2e


@contextmanager
def served(*args: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest_bfcl.testing.fake_openai", *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.kill()
        process.wait()


def test_a_group_name_is_served_and_its_models_listed(data_source):
    with served("single_turn", "--model", "my-model", "--data", str(data_source.data_dir)) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        listed = requests.get(f"{url}/models", timeout=10).json()
        assert [m["id"] for m in listed["data"]] == ["my-model"]


def test_an_unknown_category_is_one_line_naming_it():
    result = subprocess.run(
        [sys.executable, "-m", "pytest_bfcl.testing.fake_openai", "simple_pyhton"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "simple_pyhton" in result.stderr


def test_a_port_in_use_is_one_line_naming_it(data_source):
    with served("live_parallel", "--data", str(data_source.data_dir)) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        result = subprocess.run(
            [sys.executable, "-m", "pytest_bfcl.testing.fake_openai", "live_parallel",
             "--port", port, "--data", str(data_source.data_dir)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in result.stderr


def _refused(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_bfcl.testing.fake_openai", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    "args, said",
    [
        (["simple_python", "-1"], "argument latency: -1 is not a number of seconds"),
        (["simple_python", "nan"], "argument latency: nan is not a number of seconds"),
        (["--port", "99999"], "argument --port: 99999 is not a port"),
        (["--capacity", "0"], "argument --capacity: 0 is not a count"),
        (["simple_python", "--mode", "prompt"], "unrecognized arguments: --mode prompt"),
        (["--die-after", "-1"], "argument --die-after: -1 is not a count of 1 or more"),
        (["--die-after", "0"], "argument --die-after: 0 is not a count of 1 or more"),
        (["--die-after", "x"], "argument --die-after: x is not a count of 1 or more"),
        (["--stall-after", "-3"], "argument --stall-after: -3 is not a count of 1 or more"),
        (["--stall-after", "0"], "argument --stall-after: 0 is not a count of 1 or more"),
    ],
)
def test_arguments_it_cannot_serve_with_are_refused_by_name(args, said):
    result = _refused(*args)
    assert result.returncode == 2 and said in result.stderr and "Traceback" not in result.stderr


def test_a_data_directory_without_the_categories_files_is_one_line(tmp_path):
    result = _refused("simple_python", "--data", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and str(tmp_path) in result.stderr


@pytest.mark.parametrize("wire_format", ["chat-completions", "responses"])
def test_a_run_against_it_scores_the_ground_truth_in_either_wire_format(
    pytester, data_source, wire_format
):
    data = f"--bfcl-data={data_source.data_dir}"
    with served("live_parallel,multi_turn_base", "--data", str(data_source.data_dir)) as url:
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "--bfcl-model=test-model", f"--bfcl-base-url={url}",
            f"--bfcl-wire-format={wire_format}", "--bfcl-category=live_parallel,multi_turn_base",
            "--bfcl-sample=0.2", data, "--bfcl-no-cache",
        )  # fmt: skip
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert outcomes.get("failed", 0) == 0 and outcomes.get("error", 0) == 0
    assert outcomes["passed"] == 3 + 40  # a fifth of 16 and of 200 entries, every one right


def test_a_body_over_the_bound_is_refused_unread(data_source):
    """A client declaring 400 MB gets 413 at once; the server never holds the body."""
    import socket

    import psutil

    with served("live_parallel", "--data", str(data_source.data_dir)) as url:
        host, port = url.split("//")[1].split("/")[0].split(":")
        [server] = [p for p in psutil.process_iter() if _serves(p, int(port))]
        before = server.memory_info().rss
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            head = (
                "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                f"Content-Length: {400 << 20}\r\n\r\n"
            )
            sock.sendall(head.encode() + b"{" * 1024)  # the rest never comes
            answer = b"".join(iter(lambda: sock.recv(4096), b"")).decode()  # until it closes
        assert answer.startswith("HTTP/1.0 413") or answer.startswith("HTTP/1.1 413")
        assert "is over" in answer
        assert server.memory_info().rss - before < 16 << 20
        bad = requests.post(f"{url}/chat/completions", data=b"{", timeout=10)
        assert bad.status_code == 400  # not JSON: said, not a traceback


def _serves(process, port: int) -> bool:
    try:
        return any(c.laddr.port == port for c in process.net_connections("tcp"))
    except Exception:
        return False
