"""``--bfcl-model=vllm:MODEL_OR_PATH``: start ``vllm serve`` once per session, wait for it,
and talk to it as an OpenAI-compatible endpoint.

Under pytest-xdist the controller starts the server before the workers exist and hands them its
address through the environment, so every worker shares one server. The server runs in its own
process group with its output in a log file; it is stopped at the end of the session, on Ctrl-C
and on errors, and a server that dies stops the session with the last lines of its log.

vLLM prints its own arguments, API key included, so its output reaches the log through a pipe
that masks secrets line by line (:mod:`pytest_bfcl.redact`); the command line written at the
top of the log, the metadata and the error messages are masked the same way.
"""

from __future__ import annotations

import atexit
import os
import shlex
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pytest_bfcl.models.base import ModelSpecError
from pytest_bfcl.models.openai_chat import EndpointSettings, OpenAIChatModel
from pytest_bfcl.redact import redact_args, redact_data, redact_text, register_secrets_in_args

MAX_LOG_LINE = 1 << 20  # bytes; a longer line (a progress bar without newlines) is split


class ServerStartError(ModelSpecError):
    """The server did not become healthy; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return "".join(deque(fh, maxlen=lines)).rstrip()
    except OSError:
        return "(no log)"


def copy_redacted(stream: IO[bytes], log: IO[bytes]) -> None:
    """Copy the server's output into its log line by line, secrets masked, until the server
    and every process it started have closed their output; then close both."""
    with stream, log:
        for line in iter(lambda: stream.readline(MAX_LOG_LINE), b""):
            try:
                text = redact_text(line.decode("utf-8", errors="replace"))
            except Exception:  # never stop draining: a full pipe would hang the server
                text = "(a line that could not be checked for secrets was left out)\n"
            log.write(text.encode("utf-8"))
            log.flush()


def serve_command(
    executable: str, model: str, served_name: str, port: int, extra: list[str], mode: str
) -> list[str]:
    """``vllm serve`` with the address and name the plugin needs, the tool-calling switch in
    function-calling mode, and the user's flags passed through untouched."""
    command = [
        *shlex.split(executable),
        "serve",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        served_name,
    ]
    if mode == "fc":
        if not any(a.startswith("--tool-call-parser") for a in extra):
            raise ModelSpecError(
                "native tool calling on vLLM needs the model's tool-call parser: add it to "
                "--bfcl-vllm-args (for example '--tool-call-parser hermes'), or use "
                "--bfcl-mode=prompt"
            )
        if "--enable-auto-tool-choice" not in extra:
            command.append("--enable-auto-tool-choice")
    return [*command, *extra]


@dataclass
class VllmServer:
    command: list[str]
    port: int
    log_path: Path
    startup_timeout: float = 1200.0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    copier: threading.Thread | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        log.write(f"$ {shlex.join(redact_args(self.command))}\n".encode())
        log.flush()
        try:
            self.process = subprocess.Popen(
                self.command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stopped as a whole
            )
        except OSError as exc:
            log.close()
            raise ServerStartError(redact_text(f"cannot run {self.command[0]!r}: {exc}")) from None
        assert self.process.stdout is not None
        self.copier = threading.Thread(
            target=copy_redacted, args=(self.process.stdout, log), name="vllm-log", daemon=True
        )
        self.copier.start()
        atexit.register(self.stop)
        self.wait_healthy()

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        url = f"http://127.0.0.1:{self.port}/health"
        while time.monotonic() < deadline:
            if not self.alive():
                code = self.process.returncode if self.process else None
                raise ServerStartError(self._explain(f"vLLM exited with status {code}"))
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError, TimeoutError):
                pass
            time.sleep(0.25)
        self.stop()
        raise ServerStartError(
            self._explain(f"vLLM was not healthy after {self.startup_timeout:.0f}s")
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
        return self._explain(f"the vLLM server died (status {self.process.returncode})")

    def stop(self, grace: float = 30.0) -> None:
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            self._terminate(process, grace)
        self.finish_log(timeout=5.0)

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


def make_vllm_model(
    spec: str, settings: Any, scoring: Any, texts: Any, cache: Any, hook: Any
) -> VllmChatModel:
    """The model for ``vllm:MODEL_OR_PATH``: reuse the session's server (xdist workers) or
    start one."""
    model_path = spec.removeprefix("vllm:")
    if not model_path:
        raise ModelSpecError("vllm needs a model: --bfcl-model=vllm:MODEL_OR_PATH")
    extra = shlex.split(settings.vllm_args or "")
    register_secrets_in_args(extra)  # also for settings built in Python, not by the plugin
    server: VllmServer | None = None
    command: list[str] = []
    shared = settings.vllm_shared_url  # an xdist worker: the controller's server
    if shared:
        url, log_path = shared, Path(settings.vllm_shared_log or "")
    else:
        port = settings.vllm_port or free_port()
        log_path = Path(settings.vllm_log or Path(".bfcl-vllm") / f"vllm-{port}.log").resolve()
        command = serve_command(
            settings.vllm_exe, model_path, model_path, port, extra, scoring.mode
        )
        server = VllmServer(command, port, log_path, settings.vllm_startup_timeout)
        server.start()
        url = server.base_url
    # The checkpoint and every serving flag decide the answers; a key's value does not, so it
    # stays out of the identity (masked), and a rotated key keeps the cache.
    flags = shlex.join(redact_args(extra))
    identity = f"vllm:{model_path} {flags} {settings.model_identity}".strip()
    endpoint = EndpointSettings.from_settings(settings, model_path, (url,), identity)
    return VllmChatModel(endpoint, scoring, texts, cache, hook, server, extra, log_path)


class VllmChatModel(OpenAIChatModel):
    """An OpenAI-compatible client bound to the session's vLLM server."""

    def __init__(
        self,
        endpoint: Any,
        scoring: Any,
        texts: Any,
        cache: Any,
        hook: Any,
        server: VllmServer | None,
        serving_args: list[str],
        log_path: Path,
    ) -> None:
        super().__init__(endpoint, scoring, texts, cache, hook)
        self.server = server
        self.serving_args = serving_args
        self.log_path = log_path

    def metadata(self) -> dict[str, Any]:
        info = super().metadata()
        info["kind"] = "vllm"
        info["vllm"] = {
            "model": self.settings.model,
            "serving_args": self.serving_args,
            "command": self.server.command if self.server else None,
            "log": str(self.log_path),
            "shared_from_controller": self.server is None,
        }
        return redact_data(info)

    def _note_failure(self, exc: Exception) -> None:
        # A dead server is known at once: stop now, with its log, not after N entries.
        notice = self.server.death_notice() if self.server else None
        if notice:
            with self._lock:
                self.down_reason = self.down_reason or notice
            return
        super()._note_failure(exc)

    def close(self) -> None:
        super().close()
        if self.server is not None:
            self.server.stop()

    def shared_server(self) -> dict[str, str]:
        """What xdist workers need to use this process's server instead of starting one."""
        if self.server is None:
            return {}
        return {"vllm_shared_url": self.server.base_url, "vllm_shared_log": str(self.log_path)}
