"""A model server the plugin starts and stops: any command that serves an OpenAI-compatible
API on a local port (``vllm serve``, llama.cpp's server, ...).

The server runs in its own process group with its output in a log file; it is stopped at the
end of the session, on Ctrl-C and on errors (and by ``atexit`` as a last resort). Servers print
their own arguments, API keys included, so the output reaches the log through a pipe that masks
secrets line by line (:mod:`pytest_bfcl.redact`); the command line written at the top of the
log and every error message are masked the same way.
"""

from __future__ import annotations

import atexit
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from pytest_bfcl.files import output_problem, read_small_text, write_text_atomic
from pytest_bfcl.models.base import ModelSpecError
from pytest_bfcl.processes import say_unsupported
from pytest_bfcl.redact import redact_args, redact_text
from pytest_bfcl.servers.server_output import copy_redacted, log_tail
from pytest_bfcl.servers.server_pids import (
    make_temp_dir,
    port_held_by_group,
    port_in_use,
    remove_own_temp_dir,
    remove_pid_file,
    stop_left_behind,
    write_pid_file,
)

__all__ = ["ServerProcess", "ServerStartError", "free_port", "log_tail", "start_all"]

WATCH_INTERVAL = 0.5  # seconds between looks at whether a started server is still alive
GROUP_GRACE = 15.0  # seconds the server's other processes get to exit after it
START_FAILURE_GRACE = 5.0  # seconds a server that failed to start gets to exit: nothing to save
DEATH_NOTICE_MAX = 64 << 10  # bytes of a death notice read back (its log tail is bounded)


class ServerStartError(ModelSpecError):
    """The server did not become healthy; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def death_file(log_path: Path) -> Path:
    """Where the process that started a server writes why it died, for xdist workers (which
    share the server but cannot see its process)."""
    return log_path.with_name(log_path.name + ".died")


def remove_death_file(log_path: Path) -> None:
    path = death_file(log_path)
    if not output_problem(path):  # a regular file, or none: a link or a device is not ours
        path.unlink(missing_ok=True)


def published_death(log_path: Path) -> str | None:
    """A server's death notice written beside its log, or ``None`` while it runs."""
    try:
        return read_small_text(death_file(log_path), DEATH_NOTICE_MAX, False) or None
    except (OSError, ValueError):  # no such file (or none the plugin wrote); no log path at all
        return None


def refuse_taken_port(port: int, option: str) -> None:
    """A port another process already listens on is refused before the server starts: the
    server could not bind it, and whatever holds it would answer in its place."""
    if port_in_use(port):
        raise ServerStartError(
            f"port {port} is already in use by another process on this machine; "
            f"stop it, or choose another {option} (leave it out for a free one)"
        )


def stop_servers_left_behind(folder: Path) -> None:
    """Before starting servers whose logs go to ``folder``: stop those an earlier session
    started there and could not stop (it was killed), and say so, a line each."""
    for note in stop_left_behind(folder):
        sys.stderr.write(note + "\n")
        sys.stderr.flush()


@dataclass
class ServerProcess:
    """One server process on ``127.0.0.1:port``; healthy once ``health_path`` answers 200."""

    command: list[str]
    port: int
    log_path: Path
    startup_timeout: float = 1200.0
    name: str = "the server"  # in messages: "vLLM", "the server"
    health_path: str = "/health"
    env: dict[str, str] | None = None  # added to this process's environment
    temp_dir: Path | None = None  # its temporary folder: made at launch, removed at stop
    own_port: bool = False  # the listening socket must be this process group's own
    port_option: str = "port"  # the option that sets the port, for the message
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    copier: threading.Thread | None = field(default=None, repr=False)
    stopping: bool = field(default=False, repr=False)  # stopped by us: not a death
    temp_token: str | None = field(default=None, repr=False)  # the marker in its temp_dir

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def launch(self) -> None:
        """Start the process (without waiting for it to be healthy)."""
        refuse_taken_port(self.port, self.port_option)
        problem = output_problem(self.log_path)  # a FIFO would block the run, a link lead away
        if problem is not None:
            raise ServerStartError(f"cannot write the {self.name} log {self.log_path}: {problem}")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.temp_dir is not None:
            try:
                self.temp_token = make_temp_dir(self.temp_dir)
            except OSError as exc:
                raise ServerStartError(str(exc)) from None
        remove_death_file(self.log_path)  # an earlier run's
        log = self.log_path.open("ab")
        prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in (self.env or {}).items())
        log.write(f"$ {prefix}{shlex.join(redact_args(self.command))}\n".encode())
        log.flush()
        try:
            self.process = subprocess.Popen(
                self.command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env} if self.env else None,
                start_new_session=True,  # its own process group: stopped as a whole
            )
        except OSError as exc:
            log.close()
            raise ServerStartError(redact_text(f"cannot run {self.command[0]!r}: {exc}")) from None
        assert self.process.stdout is not None
        write_pid_file(self.log_path, self.name, self.process.pid, self.temp_dir, self.temp_token)
        self.copier = threading.Thread(
            target=copy_redacted, args=(self.process.stdout, log), name="server-log", daemon=True
        )
        self.copier.start()
        atexit.register(self.stop)

    def start(self) -> None:
        """Start the process and wait until it is healthy; stopped again if that fails or
        is interrupted."""
        try:
            self.launch()
            self.wait_healthy()
        except BaseException:
            self.stop(grace=START_FAILURE_GRACE)
            raise

    def publish_death(self) -> None:
        """Watch the process from a thread; if it dies (not stopped by us), write its death
        notice beside the log (:func:`published_death`)."""

        def watch() -> None:
            while not self.stopping:
                notice = self.death_notice()
                if notice is not None:
                    if not self.stopping:
                        write_text_atomic(death_file(self.log_path), notice)
                    return
                time.sleep(WATCH_INTERVAL)

        threading.Thread(target=watch, name="server-watch", daemon=True).start()

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while not self.healthy_by(deadline):
            time.sleep(0.25)

    def healthy_by(self, deadline: float) -> bool:
        """One look: whether it is healthy yet; raises :class:`ServerStartError` when it
        exited, or when ``deadline`` (a monotonic time) passed first (then it is stopped)."""
        if not self.alive():
            code = self.process.returncode if self.process else None
            raise ServerStartError(self._explain(f"{self.name} exited with status {code}"))
        try:
            url = f"http://127.0.0.1:{self.port}{self.health_path}"
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    self._refuse_foreign_answer()
                    return True
        except (urllib.error.URLError, OSError, TimeoutError):
            pass
        if time.monotonic() < deadline:
            return False
        self.stop(grace=START_FAILURE_GRACE)
        raise ServerStartError(
            self._explain(f"{self.name} was not healthy after {self.startup_timeout:.0f}s")
        )

    def _refuse_foreign_answer(self) -> None:
        """With ``own_port``: the server answering must be the one started (another that took
        the port meanwhile would answer every request in its place)."""
        if not self.own_port or self.process is None:
            return
        held = port_held_by_group(self.port, self.process.pid)
        if held is None:
            say_unsupported(
                f"this system does not say which process listens on port {self.port}: that "
                f"the {self.name} the plugin started answers there is not checked"
            )
        if held is False:
            self.stop(grace=START_FAILURE_GRACE)
            raise ServerStartError(
                f"port {self.port} is answered by another process, not by the {self.name} the "
                f"plugin started; stop it, or choose another {self.port_option}"
            )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _explain(self, what: str) -> str:
        self.finish_log(timeout=2.0)  # the server's last words, before reading them
        tail = log_tail(self.log_path)
        return redact_text(f"{what}; log {self.log_path}, last lines:\n{tail}")

    def finish_log(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until the server's output is all in the log."""
        if self.copier is not None and not self.alive():
            self.copier.join(timeout)

    def death_notice(self) -> str | None:
        """Why the server is gone, with its log, or ``None`` while it runs."""
        if self.process is None or self.alive():
            return None
        return self._explain(f"the {self.name} server died (status {self.process.returncode})")

    def stop(self, grace: float = 30.0) -> None:
        self.stopping = True
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            self._terminate(process, grace)
        self.finish_log(timeout=5.0)
        if not self.alive():
            remove_pid_file(self.log_path)
            if self.temp_dir is not None:
                remove_own_temp_dir(self.temp_dir, self.temp_token)

    @staticmethod
    def _terminate(process: subprocess.Popen[bytes], grace: float) -> None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:
            pass
        _wait_group_gone(process.pid, GROUP_GRACE)


def _wait_group_gone(group: int, grace: float) -> None:
    """Wait until every process of the server's group has exited (vLLM's engine and workers
    outlive its API server by a moment), at most ``grace`` seconds; then kill what is left."""
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            os.killpg(group, 0)
            time.sleep(0.1)
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # none left


def start_all(servers: list[ServerProcess]) -> None:
    """Launch every server at once (each may take minutes to load its model) and wait for all
    of them, looking at each in turn, so that one that fails is known at once even while
    another is still loading; then all are stopped and the failure names that one."""
    try:
        for server in servers:
            server.launch()
        deadlines = {id(s): time.monotonic() + s.startup_timeout for s in servers}
        waiting = list(servers)
        while waiting:
            waiting = [s for s in waiting if not s.healthy_by(deadlines[id(s)])]
            if waiting:
                time.sleep(0.25)
    except BaseException:
        for server in servers:
            server.stop(grace=10.0)
        raise
