"""A pid file is a claim, not a proof: the next run stops a process only when every field of the
file holds up against the system (a pid of no one of the run's own, alive, started when the
file says, running the command it records, leading its own group), and removes a folder only
when it stopped that server and the folder is the one the plugin made. Every field is tried
here with hostile values; each case ends in one line, nothing signalled, nothing removed."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_bfcl.processes import command_line, process_start
from pytest_bfcl.servers.server_pids import (
    PID_MARK,
    PidFile,
    command_digest,
    make_temp_dir,
    pid_file,
    stop_left_behind,
    write_pid_file,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups")

SALT = "00" * 16


@pytest.fixture
def server():
    """A process standing in for a server a killed run left behind: its own session and
    process group, as the plugin starts servers."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    # Popen returns once the child is forked; until it has exec'd, its command line is this
    # test run's, which a claim written now would record (and the check later refuse).
    deadline = time.monotonic() + 15
    while "time.sleep(60)" not in " ".join(command_line(process.pid) or []):
        assert time.monotonic() < deadline, "the stand-in server did not start"
        time.sleep(0.01)
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


def dead_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


def claim(process: subprocess.Popen, logs: Path, **fields) -> dict:
    """What the plugin would have written for ``process``, its session gone; ``fields``
    replace any of it."""
    arguments = command_line(process.pid)
    assert arguments is not None
    data = PidFile(
        kind=PID_MARK, name="vLLM", pid=process.pid, start=process_start(process.pid) or 0.0,
        command=command_digest(arguments, SALT), salt=SALT, owner=dead_pid(), owner_start=1.0,
        log=str(logs / "server.log"), temp_dir=None,
    ).model_dump()  # fmt: skip
    return {**data, **fields}


def write_claim(logs: Path, data: dict) -> Path:
    logs.mkdir(parents=True, exist_ok=True)
    path = pid_file(logs / "server.log")
    path.write_text(json.dumps(data))
    return path


def running(process: subprocess.Popen) -> bool:
    time.sleep(0.1)
    return process.poll() is None


# -- a true claim ----------------------------------------------------------------------------


def test_a_true_claim_stops_the_server_removes_its_folder_and_says_so_once(tmp_path, server):
    logs = tmp_path / "logs"
    temp = logs / "vllm-tmp-8000"
    token = make_temp_dir(temp)
    (temp / "vllm_dist_x").write_text("left by the server")
    path = write_claim(logs, claim(server, logs, temp_dir=os.path.realpath(temp), temp_token=token))
    [note] = stop_left_behind(logs)
    assert f"stopped vLLM (pid {server.pid}) that an earlier run left running" in note
    server.wait(timeout=15)
    assert not temp.exists() and not path.exists()


def test_the_plugin_writes_a_claim_it_later_honours(tmp_path, server):
    logs = tmp_path / "logs"
    temp = logs / "vllm-tmp-9"
    token = make_temp_dir(temp)
    write_pid_file(logs / "server.log", "vLLM", server.pid, temp, token)
    text = pid_file(logs / "server.log").read_text()
    assert sys.executable not in text  # the command line is kept as a salted digest only
    record = json.loads(text)
    record["owner"], record["owner_start"] = dead_pid(), 1.0  # its session is gone
    write_claim(logs, record)
    [note] = stop_left_behind(logs)
    assert "stopped vLLM" in note and not temp.exists()


# -- hostile pids ----------------------------------------------------------------------------


def own_values() -> dict[str, int]:
    return {
        "own pid": os.getpid(),
        "own group": os.getpgrp(),
        "own session": os.getsid(0),
        "parent": os.getppid(),
    }


@pytest.mark.parametrize(
    "pid",
    [0, -1, 1, "own pid", "own group", "own session", "parent"],
)
def test_a_pid_of_no_server_is_refused_in_one_line(tmp_path, server, pid):
    value = own_values().get(pid, pid) if isinstance(pid, str) else pid
    logs = tmp_path / "logs"
    path = write_claim(logs, claim(server, logs, pid=value, start=process_start(value) or 1.0))
    [note] = stop_left_behind(logs)  # pid 0 would be this run's own process group
    assert f"ignored the pid file {path}" in note and "nothing stopped or removed" in note
    assert "\n" not in note and path.exists() and running(server)


@pytest.mark.parametrize(
    "field,value",
    [
        ("pid", 2**40),
        ("pid", "12345"),
        ("pid", 12.5),
        ("pid", True),
        ("pid", None),
        ("start", "1795921325"),
        ("start", float("nan")),
        ("owner_start", float("inf")),
        ("owner", 2**40),
        ("owner", 0),
        ("owner", -5),
        ("command", "x" * 64),
        ("salt", "not hex"),
        ("name", "n" * 10_000),
        ("log", ["a list"]),
        ("temp_dir", 7),
        ("temp_token", "../../etc"),
    ],
)
def test_every_field_with_a_hostile_value_is_refused_in_one_line(tmp_path, server, field, value):
    logs = tmp_path / "logs"
    path = write_claim(logs, claim(server, logs, **{field: value}))
    [note] = stop_left_behind(logs)
    assert f"ignored the pid file {path}" in note and "\n" not in note
    assert path.exists() and running(server)


def test_a_pid_whose_start_time_differs_is_never_stopped(tmp_path, server):
    logs = tmp_path / "logs"
    temp = logs / "vllm-tmp-1"
    token = make_temp_dir(temp)
    start = (process_start(server.pid) or 0.0) - 60
    write_claim(
        logs, claim(server, logs, start=start, temp_dir=os.path.realpath(temp), temp_token=token)
    )
    assert stop_left_behind(logs) == []  # the pid is another program's now: a stale record
    assert running(server) and temp.is_dir()  # no server stopped: nothing removed


def test_a_true_start_time_with_another_command_line_is_never_stopped(tmp_path, server):
    logs = tmp_path / "logs"
    forged = claim(server, logs, command=command_digest(["vllm", "serve"], SALT))
    path = write_claim(logs, forged)
    [note] = stop_left_behind(logs)
    assert "runs another command than the one the pid file records" in note
    assert running(server) and path.exists()


def test_a_process_in_this_runs_group_is_never_stopped(tmp_path):
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as child:
        try:
            logs = tmp_path / "logs"
            path = write_claim(logs, claim(child, logs))
            [note] = stop_left_behind(logs)
            assert "does not lead a process group and session of its own" in note
            assert running(child) and path.exists()
        finally:
            child.kill()


def test_a_running_session_keeps_its_server(tmp_path, server):
    logs = tmp_path / "logs"
    owner = {"owner": os.getpid(), "owner_start": process_start(os.getpid())}
    path = write_claim(logs, claim(server, logs, **owner))
    assert stop_left_behind(logs) == [] and running(server) and path.exists()


def test_another_programs_pid_file_is_passed_over(tmp_path):
    (tmp_path / "nginx.pid").write_text("12345\n")
    (tmp_path / "other.pid").write_text(json.dumps({"pid": 0}))
    assert stop_left_behind(tmp_path) == []
    assert (tmp_path / "nginx.pid").exists() and (tmp_path / "other.pid").exists()


def test_a_claim_for_another_log_is_refused(tmp_path, server):
    logs = tmp_path / "logs"
    path = write_claim(logs, claim(server, logs, log=str(tmp_path / "elsewhere.log")))
    [note] = stop_left_behind(logs)
    assert "not the one beside it" in note and running(server) and path.exists()


# -- hostile folders -------------------------------------------------------------------------


def checkout(tmp_path: Path) -> Path:
    """A repository with its server log folder inside it."""
    repo = tmp_path / "checkout"
    for part in ("src", ".git", ".bfcl-server/vllm-tmp-1"):
        (repo / part).mkdir(parents=True)
    (repo / "src" / "model.py").write_text("weights = 1\n")
    return repo


@pytest.mark.parametrize(
    "temp_dir",
    [
        ".bfcl-server/sub/../..",  # relative, through ..
        "{repo}/.bfcl-server/sub/../..",  # absolute, through ..
        "{repo}/.bfcl-server/vllm-tmp-1/../..",
        "{repo}",  # absolute, outside the log folder
        "{repo}/src",
        "/",
        "{repo}/.bfcl-server/link-tmp",  # a link to the checkout (renamed below)
        "{repo}/.bfcl-server/vllm-tmp-7",  # the plugin's name, a link to the checkout
        "{repo}/.bfcl-server/vllm-tmp-1",  # the plugin's name, no marker
        "{repo}/.bfcl-server/vllm-tmp-2",  # the plugin's name, another token in its marker
        "{repo}/.bfcl-server/other",  # not the plugin's name
    ],
)
def test_a_stopped_server_removes_no_folder_but_its_own(tmp_path, server, temp_dir, monkeypatch):
    repo = checkout(tmp_path)
    logs = repo / ".bfcl-server"
    monkeypatch.chdir(repo)
    (logs / "link-tmp").symlink_to(repo)
    (logs / "vllm-tmp-7").symlink_to(repo)
    (logs / "other").mkdir()
    make_temp_dir(logs / "vllm-tmp-2")
    raw = temp_dir.format(repo=repo)
    path = write_claim(logs, claim(server, logs, temp_dir=raw, temp_token="ab" * 16))
    [note] = stop_left_behind(logs)  # the server itself is a true claim: it is stopped
    assert "stopped vLLM" in note and "\n" not in note
    assert "left" in note or "not" in note  # says why its folder stays
    server.wait(timeout=15)
    assert (repo / "src" / "model.py").is_file() and (repo / ".git").is_dir()
    assert (logs / "vllm-tmp-1").is_dir() and (logs / "vllm-tmp-2").is_dir()
    assert (logs / "other").is_dir() and (logs / "vllm-tmp-7").is_symlink()
    assert not path.exists()


def test_no_folder_is_removed_when_no_server_was_stopped(tmp_path):
    repo = checkout(tmp_path)
    logs = repo / ".bfcl-server"
    token = make_temp_dir(logs / "vllm-tmp-3")
    data = claim_of_dead(logs, temp_dir=os.path.realpath(logs / "vllm-tmp-3"), temp_token=token)
    write_claim(logs, data)
    assert stop_left_behind(logs) == []
    assert (logs / "vllm-tmp-3").is_dir() and (repo / "src").is_dir()


def claim_of_dead(logs: Path, **fields) -> dict:
    data = PidFile(
        kind=PID_MARK, name="vLLM", pid=dead_pid(), start=1.0, command="0" * 64, salt=SALT,
        owner=dead_pid(), owner_start=1.0, log=str(logs / "server.log"),
    ).model_dump()  # fmt: skip
    return {**data, **fields}


def test_a_folder_already_there_that_is_not_the_plugins_is_refused(tmp_path):
    (tmp_path / "vllm-tmp-5").mkdir()
    (tmp_path / "vllm-tmp-5" / "mine.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="is not a temporary folder the plugin made"):
        make_temp_dir(tmp_path / "vllm-tmp-5")
    (tmp_path / "vllm-tmp-6").symlink_to(tmp_path / "vllm-tmp-5")
    with pytest.raises(FileExistsError):
        make_temp_dir(tmp_path / "vllm-tmp-6")
    assert (tmp_path / "vllm-tmp-5" / "mine.txt").is_file()


# -- what the file is ------------------------------------------------------------------------


def test_a_pid_file_linked_to_dev_zero_costs_nothing(tmp_path):
    (tmp_path / "server.log.pid").symlink_to("/dev/zero")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    [note] = stop_left_behind(tmp_path)
    seconds = time.perf_counter() - started
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert "is a symbolic link, not a regular file" in note and "nothing stopped" in note
    assert seconds < 5 and grown_kb < 50_000
    assert (tmp_path / "server.log.pid").is_symlink()


def test_a_pid_file_that_is_a_fifo_never_hangs(tmp_path):
    os.mkfifo(tmp_path / "server.log.pid")
    started = time.perf_counter()
    [note] = stop_left_behind(tmp_path)
    assert "is a FIFO, not a regular file" in note and time.perf_counter() - started < 5


def test_an_oversized_pid_file_is_refused(tmp_path):
    (tmp_path / "server.log.pid").write_text(" " * (64 << 10))
    [note] = stop_left_behind(tmp_path)
    assert "larger than" in note


def test_a_pid_files_fields_are_escaped_in_the_note(tmp_path, server):
    logs = tmp_path / "logs"
    path = write_claim(logs, claim(server, logs, name="bad \ud800"))
    [refused] = stop_left_behind(logs)  # a lone surrogate is no text: refused
    assert "its name is not valid" in refused and path.exists() and running(server)
    hostile = "\x1b[2J\rpytest-bfcl: passed \u202e"
    write_claim(logs, claim(server, logs, name=hostile, log=str(logs / "\x1b]0;x\x07server.log")))
    path.rename(pid_file(logs / "\x1b]0;x\x07server.log"))
    [note] = stop_left_behind(logs)
    assert "stopped" in note
    assert all(ch.isprintable() for ch in note.replace(str(logs), ""))
    assert "\\x1b[2J\\rpytest-bfcl" in note and "\\u202e" in note and "\\x07" in note


def test_pid_0_in_a_run_leaves_the_run_alive(tmp_path, server):
    """The process group of the run is 0 to ``killpg``: the run would kill itself."""
    handler = signal.signal(signal.SIGTERM, lambda *_: pytest.fail("SIGTERM reached this run"))
    try:
        logs = tmp_path / "logs"
        write_claim(logs, claim(server, logs, pid=0, start=0.0))
        [note] = stop_left_behind(logs)
        assert "its pid 0 is no server's the plugin starts" in note
    finally:
        signal.signal(signal.SIGTERM, handler)
