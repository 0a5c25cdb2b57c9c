"""What the plugin asks the system about processes goes through psutil, and answers ``None`` (or
no) for what it cannot tell, never a guess: start times, command lines, groups, ports, stopped
processes, with no ``/proc`` read by the plugin itself."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_bfcl import processes
from pytest_bfcl.processes import (
    command_line,
    group_members,
    is_stopped,
    listens_on,
    own_lineage,
    process_alive,
    process_group,
    process_session,
    process_start,
    process_user,
)

PACKAGE = Path(processes.__file__).parent

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups")


@pytest.fixture
def sleeper():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               start_new_session=True)  # fmt: skip
    # Popen returns once the child is forked: wait until it has exec'd (its own command line)
    deadline = time.monotonic() + 15
    while "time.sleep(60)" not in " ".join(command_line(process.pid) or []):
        assert time.monotonic() < deadline, "the sleeper did not start"
        time.sleep(0.01)
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


def test_a_running_process_is_described(sleeper):
    assert process_alive(sleeper.pid)
    start = process_start(sleeper.pid)
    assert start is not None and abs(start - time.time()) < 60
    assert command_line(sleeper.pid) == [sys.executable, "-c", "import time; time.sleep(60)"]
    assert process_user(sleeper.pid) == os.getuid()
    assert process_group(sleeper.pid) == sleeper.pid == process_session(sleeper.pid)
    assert group_members(sleeper.pid) == [sleeper.pid]


@pytest.mark.parametrize("pid", [0, -1, 2**40, 2**63, True])
def test_pids_of_no_process_answer_nothing(pid):
    assert process_start(pid) is None and command_line(pid) is None
    assert not process_alive(pid) and process_group(pid) is None
    assert group_members(pid) == [] and listens_on(pid, 80) is False


def test_an_exited_process_is_not_alive(sleeper):
    sleeper.kill()
    time.sleep(0.2)  # not reaped yet: a zombie, which is no running process
    assert not process_alive(sleeper.pid)
    sleeper.wait()
    assert process_start(sleeper.pid) is None


def test_the_runs_own_lineage_holds_its_process_and_its_parents():
    lineage = own_lineage()
    assert {os.getpid(), os.getppid()} <= lineage


def test_a_stopped_process_is_seen_stopped(sleeper):
    assert not is_stopped(sleeper.pid)
    os.kill(sleeper.pid, signal.SIGSTOP)
    deadline = time.monotonic() + 5
    while not is_stopped(sleeper.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert is_stopped(sleeper.pid)
    os.kill(sleeper.pid, signal.SIGCONT)


def test_the_process_listening_on_a_port_is_known():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert listens_on(os.getpid(), port) is True
        assert listens_on(os.getpid(), port + 1 if port < 65535 else port - 1) is False


def test_unsupported_checks_are_said_once(capsys):
    processes.say_unsupported("this system cannot tell a test")
    processes.say_unsupported("this system cannot tell a test")
    assert capsys.readouterr().err == "pytest-bfcl: this system cannot tell a test\n"


def test_the_plugin_reads_no_proc_of_its_own():
    """Process facts come from psutil (which knows each system), never from /proc paths."""
    readers = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if '"/proc' in path.read_text(encoding="utf-8")
        or 'Path("/proc")' in path.read_text(encoding="utf-8")
    ]
    assert readers == []
