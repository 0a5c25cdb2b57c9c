"""The processes of started servers never outlive the run: SIGTERM and SIGINT stop them (vLLM
and ``--bfcl-server-cmd``) with their temporary folders; one a SIGKILL left behind is stopped
by the next run, in one line (what a pid file may claim: test_pid_file_claims.py); a port another
server holds is refused; a server's output is read line-bounded, and its start timeout holds
while it floods. Driven with the stand-in server (``pytest_bfcl.testing.stand_in_vllm``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_vllm_server import gone, pids

from pytest_bfcl.servers.server_pids import pid_file, port_held_by_group

PYTHON = sys.executable
STAND_IN = f"{PYTHON} -m pytest_bfcl.testing.stand_in_vllm"
SERVER_CMD = f"{STAND_IN} serve test-model --host 127.0.0.1 --port {{port}}"


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    starts = tmp_path / "starts.txt"
    monkeypatch.setenv("STANDIN_STARTS", str(starts))
    monkeypatch.setenv("STANDIN_CATEGORIES", "live_simple")
    monkeypatch.delenv("PYTEST_BFCL_VLLM_URL", raising=False)
    return starts


def vllm_args(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "--bfcl-model=vllm:acme/tool-model-7b",
        f"--bfcl-vllm-exe={STAND_IN}",
        "--bfcl-vllm-args=--tool-call-parser hermes",
        f"--bfcl-vllm-log={tmp_path / 'logs' / 'vllm.log'}",
        "--bfcl-category=live_simple",
        "--bfcl-no-cache",
        "--bfcl-retries=1",
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def server_args(tmp_path: Path, *extra: str, command: str = SERVER_CMD) -> list[str]:
    return [
        "--bfcl-model=test-model",
        "--bfcl-mode=prompt",
        f"--bfcl-server-cmd={command}",
        f"--bfcl-server-log={tmp_path / 'logs' / 'server.log'}",
        "--bfcl-category=live_simple",
        "--bfcl-no-cache",
        "--bfcl-retries=1",
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def start_session(args: list[str], tmp_path: Path, data_source) -> subprocess.Popen[str]:
    command = [
        PYTHON, "-m", "pytest", *args, f"--bfcl-data={data_source.data_dir}",
        "--bfcl-concurrency=2", str(tmp_path),
    ]  # fmt: skip
    return subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=answer_sigint,
    )  # fmt: skip


def answer_sigint() -> None:
    """A session started from a shell's background job inherits SIGINT ignored, and Python
    then never turns it into KeyboardInterrupt: give it the default back."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def signal_session(process, signum: int, starts: Path, serving: bool = True) -> tuple[str, float]:
    """Send ``signum`` once the stand-in has started (and served a while when ``serving``);
    the session's output and the seconds from the signal until the session and the stand-in
    are gone."""
    wait_for(lambda: bool(pids(starts)))
    time.sleep(2.0 if serving else 0.5)
    sent = time.monotonic()
    process.send_signal(signum)
    out, _ = process.communicate(timeout=60)
    assert all(gone(pid, wait=30) for pid in pids(starts))
    return out, time.monotonic() - sent


# -- SIGTERM and SIGINT ------------------------------------------------------------------------


def test_sigterm_mid_run_stops_vllm_and_removes_its_temporary_folder(
    stand_in, tmp_path, monkeypatch, data_source
):
    monkeypatch.setenv("STANDIN_LATENCY", "0.5")
    monkeypatch.setenv("STANDIN_TEMP_FILE", "1")
    report = tmp_path / "report.json"
    process = start_session(vllm_args(tmp_path, f"--bfcl-report={report}"), tmp_path, data_source)
    out, seconds = signal_session(process, signal.SIGTERM, stand_in)
    assert process.returncode == pytest.ExitCode.INTERRUPTED
    assert seconds < 30
    [line] = [line for line in out.splitlines() if "SIGTERM" in line]
    assert "stopped by SIGTERM" in line and "Traceback" not in out
    logs = tmp_path / "logs"
    assert not list(logs.glob("vllm-tmp-*"))  # its temporary folder went with it
    assert not pid_file(logs / "vllm.log").exists()
    assert json.loads(report.read_text())["metadata"]  # what was scored is still reported


def test_sigterm_while_vllm_starts_stops_it(stand_in, tmp_path, monkeypatch, data_source):
    monkeypatch.setenv("STANDIN_HEALTH_DELAY", "60")  # never healthy within the test
    monkeypatch.setenv("STANDIN_TEMP_FILE", "1")
    process = start_session(vllm_args(tmp_path), tmp_path, data_source)
    out, seconds = signal_session(process, signal.SIGTERM, stand_in, serving=False)
    assert process.returncode != 0 and seconds < 30
    assert "stopped by SIGTERM" in out
    assert not list((tmp_path / "logs").glob("vllm-tmp-*"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_run_stops_the_server_command(
    stand_in, tmp_path, monkeypatch, data_source, signum
):
    monkeypatch.setenv("STANDIN_LATENCY", "0.5")
    monkeypatch.setenv("STANDIN_MODE", "prompt")
    process = start_session(server_args(tmp_path), tmp_path, data_source)
    out, seconds = signal_session(process, signum, stand_in)
    assert process.returncode == pytest.ExitCode.INTERRUPTED and seconds < 30
    assert ("stopped by SIGTERM" if signum == signal.SIGTERM else "KeyboardInterrupt") in out
    assert not pid_file(tmp_path / "logs" / "server.log").exists()


# -- a server a killed session left behind ---------------------------------------------------------


def test_a_server_a_sigkill_left_behind_is_stopped_by_the_next_run(
    pytester, stand_in, tmp_path, monkeypatch, data_source
):
    monkeypatch.setenv("STANDIN_LATENCY", "0.5")
    monkeypatch.setenv("STANDIN_MODE", "prompt")
    process = start_session(server_args(tmp_path), tmp_path, data_source)
    log = tmp_path / "logs" / "server.log"
    # serving: a server still starting would die of its closed output at its next line
    wait_for(lambda: log.exists() and "serving on" in log.read_text())
    time.sleep(1.0)
    process.kill()
    process.communicate(timeout=30)
    [left] = pids(stand_in)
    time.sleep(0.5)
    assert not gone(left, wait=0.5)  # SIGKILL cannot stop it: it runs on, its parent gone
    assert pid_file(log).exists()
    monkeypatch.setenv("STANDIN_LATENCY", "0")
    result = pytester.runpytest(*server_args(tmp_path))
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 200 and "errors" not in outcomes
    assert gone(left)
    [line] = [line for line in result.errlines if "earlier run" in line]
    assert f"stopped model server (pid {left}) that an earlier run left running" in line
    assert not pid_file(tmp_path / "logs" / "server.log").exists()


def test_hostile_pid_files_in_the_log_folder_remove_and_stop_nothing(
    pytester, stand_in, tmp_path, monkeypatch
):
    """A checkout whose server log folder holds pid files written to harm: one naming pid 0
    (to ``killpg``, the run's own group), one naming a dead server whose folder is the whole
    checkout through ``..``, one that is a link to /dev/zero. A plain run goes on, one line
    for each, with the checkout whole."""
    monkeypatch.setenv("STANDIN_MODE", "prompt")
    repo = tmp_path / "checkout"
    logs = repo / ".bfcl-server"
    for part in ("src", ".git", ".bfcl-server"):
        (repo / part).mkdir(parents=True)
    (repo / "src" / "model.py").write_text("weights = 1\n")
    base = {
        "kind": "pytest-bfcl started server", "name": "model server", "start": 1.0,
        "command": "0" * 64, "salt": "0" * 32, "owner": 99999, "owner_start": 1.0,
    }  # fmt: skip
    (logs / "a.log.pid").write_text(json.dumps({**base, "pid": 0, "log": str(logs / "a.log")}))
    dead = {"pid": 99998, "log": str(logs / "b.log"), "temp_dir": f"{logs}/sub/../.."}
    (logs / "b.log.pid").write_text(json.dumps({**base, **dead}))
    (logs / "c.log.pid").symlink_to("/dev/zero")
    args = [a for a in server_args(tmp_path) if not a.startswith("--bfcl-server-log")]
    result = pytester.runpytest(*args, f"--bfcl-server-log={logs / 'server.log'}")
    outcomes = result.parseoutcomes()  # the run is scored as without them
    assert outcomes["passed"] > 200 and "errors" not in outcomes
    lines = [line for line in result.errlines if "pid file" in line]
    assert len(lines) == 2, lines  # pid 0 and /dev/zero; the dead server's is a stale record
    assert any("its pid 0 is no server's the plugin starts" in line for line in lines)
    assert any("c.log.pid: it is a symbolic link" in line for line in lines)
    assert (repo / "src" / "model.py").is_file() and (repo / ".git").is_dir()


# -- ports -----------------------------------------------------------------------------------------


def test_a_port_another_server_holds_is_refused_before_the_run(pytester, stand_in, tmp_path):
    import socket

    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        result = pytester.runpytest(*vllm_args(tmp_path, f"--bfcl-vllm-port={port}"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"port {port} is already in use by another process" in err
    assert "--bfcl-vllm-port" in err and "Traceback" not in err
    assert pids(stand_in) == []  # no vLLM started


FOREIGN = """\
import subprocess, sys, time
port = sys.argv[sys.argv.index("--port") + 1]
other = subprocess.Popen(
    [sys.executable, sys.argv[2], port],
    start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
open(sys.argv[1], "w").write(str(other.pid))
time.sleep(120)
"""

ANSWERS_ALL = """\
import http.server, sys

class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ok).serve_forever()
"""


def test_a_port_answered_by_another_process_is_refused(pytester, tmp_path):
    """Another program takes the port while vLLM starts and answers its health check: the
    plugin's vLLM must be the one answering."""
    script, server = tmp_path / "foreign.py", tmp_path / "answers_all.py"
    script.write_text(FOREIGN)
    server.write_text(ANSWERS_ALL)
    other = tmp_path / "other.pid"
    args = [a for a in vllm_args(tmp_path) if not a.startswith("--bfcl-vllm-exe")]
    result = pytester.runpytest(*args, f"--bfcl-vllm-exe={PYTHON} {script} {other} {server}")
    try:
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        err = result.stderr.str()
        assert "is answered by another process, not by the vLLM the plugin started" in err
    finally:
        os.kill(int(other.read_text()), signal.SIGKILL)


def test_port_held_by_group():
    import socket

    with socket.socket() as mine:
        mine.bind(("127.0.0.1", 0))
        mine.listen()
        port = mine.getsockname()[1]
        assert port_held_by_group(port, os.getpgid(0)) is True
        with subprocess.Popen(["sleep", "30"], start_new_session=True) as other:
            assert port_held_by_group(port, other.pid) is False
            other.kill()


# -- a server's output -------------------------------------------------------------------------

FLOOD = """\
import sys, time
chunk = b"x" * 65536
while True:
    sys.stdout.buffer.write(chunk)
"""


def test_a_flood_without_newlines_keeps_the_start_timeout_and_a_short_message(pytester, tmp_path):
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    started = time.monotonic()
    result = pytester.runpytest(
        *server_args(
            tmp_path, "--bfcl-server-startup-timeout=3", command=f"{PYTHON} {script} {{port}}"
        )
    )
    seconds = time.monotonic() - started
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "not healthy after 3s" in err
    assert len(err) < 20_000  # a bounded excerpt of the log, not the flood
    assert "more bytes of this line cut" in err or "more characters" in err
    assert seconds < 3 + 15  # the timeout, the stop's grace, and the run's own start
    with (tmp_path / "logs" / "server.log").open("rb") as log:
        assert max(len(line) for line in log) < 20_000  # every line cut
