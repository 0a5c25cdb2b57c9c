"""``--bfcl-server-cmd``: any OpenAI-compatible server command started for the session, driven
with the stand-in server (``pytest_bfcl.testing.stand_in_vllm``, which serves the oracle's answers on the port it
is given): start and health wait, the log with secrets masked, one server shared by xdist
workers, teardown on success, failure and interrupt, a server dying mid-run."""

from __future__ import annotations

import json
import sys
import time

import pytest
from test_vllm_server import gone, interrupt_while_serving, pids

SECRET = "sk-test-ServerCmdSecret0123456789"
COMMAND = (
    f"{sys.executable} -m pytest_bfcl.testing.stand_in_vllm serve test-model --host 127.0.0.1 "
    f"--port {{port}} --api-key {SECRET}"
)


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    starts = tmp_path / "starts.txt"
    monkeypatch.setenv("STANDIN_STARTS", str(starts))
    monkeypatch.setenv("STANDIN_CATEGORIES", "live_parallel,live_simple")
    monkeypatch.setenv("STANDIN_MODE", "prompt")
    return starts


def server_args(tmp_path, *extra, category="live_parallel", command=COMMAND):
    return [
        "--bfcl-model=test-model",
        "--bfcl-mode=prompt",
        f"--bfcl-server-cmd={command}",
        f"--bfcl-server-log={tmp_path / 'server.log'}",
        f"--bfcl-category={category}",
        "--bfcl-no-cache",
        "--bfcl-retries=1",
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def test_start_health_wait_scores_and_teardown(pytester, stand_in, tmp_path):
    report = tmp_path / "report.json"
    result = pytester.runpytest(*server_args(tmp_path, f"--bfcl-report={report}"))
    result.assert_outcomes(passed=16)
    [pid] = pids(stand_in)
    assert gone(pid)  # stopped at the end of the session
    log = (tmp_path / "server.log").read_text()
    assert "serve test-model" in log and "serving on 127.0.0.1:" in log
    assert SECRET not in log and "***" in log  # the command line and the server's own output
    info = json.loads(report.read_text())["metadata"]["model_info"]
    assert info["kind"] == "started-server" and SECRET not in json.dumps(info)
    # the port is not part of the cache identity: a rerun on another port reuses answers
    assert "--port '{port}'" in info["identity"]


def test_one_server_shared_by_xdist_workers(pytester, stand_in, tmp_path):
    result = pytester.runpytest_subprocess(*server_args(tmp_path, "-n", "2"))
    result.assert_outcomes(passed=16)
    assert len(pids(stand_in)) == 1
    assert gone(pids(stand_in)[0])


def test_a_server_that_fails_to_start_shows_its_log(pytester, stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_FAIL", "1")
    result = pytester.runpytest(*server_args(tmp_path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "model server exited with status 1" in err and str(tmp_path / "server.log") in err
    assert "CUDA out of memory" in err and "Traceback" not in err


def test_a_server_that_dies_mid_run_stops_the_session_once(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.setenv("STANDIN_DIE_AFTER", "5")
    started = time.monotonic()
    result = pytester.runpytest(
        *server_args(tmp_path, "--bfcl-concurrency=1", category="live_simple")
    )
    assert time.monotonic() - started < 60
    out = result.stdout.str()
    assert "server died" in out and "device lost" in out  # the log's last lines
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 5
    assert outcomes.get("passed", 0) + outcomes.get("errors", 0) < 100  # stopped, not 258 errors


def test_interrupt_stops_the_server(stand_in, tmp_path, monkeypatch, data_source):
    monkeypatch.setenv("STANDIN_LATENCY", "0.5")
    args = server_args(tmp_path, category="live_simple")
    out = interrupt_while_serving(args, stand_in, tmp_path, data_source)
    assert "KeyboardInterrupt" in out or "Interrupted" in out
    assert gone(pids(stand_in)[0])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--bfcl-server-cmd=llama-server --port 8080"], "must say where the port goes"),
        (["--bfcl-server-cmd=serve 'x {port}"], "cannot be split into words"),
        (["--bfcl-base-url=http://127.0.0.1:9/v1"], "exclude each other"),
        (["--bfcl-model=oracle"], "give --bfcl-model the name the server serves"),
    ],
)
def test_bad_combinations_are_refused_before_anything_starts(
    pytester, stand_in, tmp_path, extra, message
):
    result = pytester.runpytest(*server_args(tmp_path), *extra)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert pids(stand_in) == []
