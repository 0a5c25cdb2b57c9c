"""``--bfcl-server-cmd "COMMAND"``: start any OpenAI-compatible server (llama.cpp's, SGLang,
``transformers serve``, a script of your own) once per session and score the model it serves.

The command is split like a shell line (no shell runs it: no pipes or variables) and must hold
``{port}`` where the port goes; the plugin picks a free port, substitutes it, and talks to
``http://127.0.0.1:PORT/v1``. The server is healthy when ``GET /v1/models`` answers. Everything
else is the started-server life cycle of :mod:`pytest_bfcl.servers.server_process`: its output
in a log file with secrets masked, a clean stop at the end of the session, on Ctrl-C and on
errors, and a server that dies stops the session once with the last lines of its log. Under
pytest-xdist the controller starts it before the workers exist and they share it.

On the completions route (``--bfcl-leaderboard-model`` naming an open-weight entry) the server
is asked ``/v1/completions`` with the prompt the entry's handler renders here
(:class:`ServedCompletionsModel`); prompt tokens are counted by ``--bfcl-tokenizer``'s folder, or
the server's ``/tokenize``.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pytest_bfcl.models.base import ModelSpecError
from pytest_bfcl.models.completions import CompletionsModel, HandlerRoute, client_arguments
from pytest_bfcl.models.endpoint_request import EndpointSettings
from pytest_bfcl.option_rules import SERVER_PORT_FIELD, server_command_words
from pytest_bfcl.redact import redact_args, redact_data, register_secrets_in_args
from pytest_bfcl.servers.server_process import (
    ServerProcess,
    free_port,
    stop_servers_left_behind,
)
from pytest_bfcl.servers.serving_inputs import input_digests, served_identity
from pytest_bfcl.servers.started_servers import StartedServersModel

HEALTH_PATH = "/v1/models"  # answered by every OpenAI-compatible server once it serves
LOG_DIR = Path(".bfcl-server")


def server_command(template: str, port: int) -> list[str]:
    """The command to run, with the port in every ``{port}``."""
    words = server_command_words(template)
    return [word.replace(SERVER_PORT_FIELD, str(port)) for word in words]


def make_served_model(
    spec: str,
    settings: Any,
    scoring: Any,
    texts: Any,
    cache: Any,
    hook: Any,
    route: HandlerRoute | None = None,
) -> ServedChatModel:
    """The model ``spec`` (the name the server serves it under) on a server started from
    ``--bfcl-server-cmd``, or on the controller's server for an xdist worker. ``route``: asked
    on ``/v1/completions`` as that leaderboard handler asks; None: chat completions."""
    if spec.startswith(("vllm:", "replay:", "oracle:")) or spec == "oracle":
        raise ModelSpecError(
            "--bfcl-server-cmd starts the server of an endpoint model: give --bfcl-model the "
            "name the server serves the model under"
        )
    if settings.base_urls:
        raise ModelSpecError("--bfcl-server-cmd and --bfcl-base-url exclude each other")
    try:
        words = server_command_words(settings.server_cmd)
    except ValueError as exc:
        raise ModelSpecError(f"--bfcl-server-cmd {exc}") from None
    register_secrets_in_args(words)  # also for settings built in Python, not by the plugin
    server: ServerProcess | None = None
    if settings.server_shared_url:  # an xdist worker: the controller's server
        url, log = settings.server_shared_url, Path(settings.server_shared_log or "")
    else:
        port = free_port()
        log = Path(settings.server_log or LOG_DIR / f"server-{port}.log").resolve()
        stop_servers_left_behind(log.parent)
        server = ServerProcess(
            server_command(settings.server_cmd, port),
            port,
            log,
            settings.server_startup_timeout,
            name="model server",
            health_path=HEALTH_PATH,
        )
        server.start()
        url = server.base_url
    # The command and the content of every file it names (a checkpoint replaced at the same
    # path, an edited chat template) decide the answers, the port does not: the identity keeps
    # "{port}", so a rerun on another port answers from the cache. Secrets are masked out of it.
    inputs = input_digests(words)
    identity = served_identity(
        f"server:{shlex.join(redact_args(words))}",
        inputs,
        settings.model_revision,
        settings.model_identity,
    )
    endpoint = EndpointSettings.from_settings(settings, spec, (url,), identity)
    model_class = ServedChatModel if route is None else ServedCompletionsModel
    model = model_class(
        *client_arguments(route, endpoint, scoring, texts, cache, hook),
        server=server,
        command=words,
        log_path=log,
    )
    model.inputs = inputs
    return model


class ServedChatModel(StartedServersModel):
    """An OpenAI-compatible client bound to the server the session started."""

    def __init__(
        self,
        *client_args: Any,
        server: ServerProcess | None,
        command: list[str],
        log_path: Path,
        **client_kwargs: Any,
    ) -> None:
        """``client_args``, ``client_kwargs``: the client's own (its endpoint first)."""
        servers = [server] if server is not None else []  # none in an xdist worker
        super().__init__(*client_args, servers=servers, log_paths=[log_path], **client_kwargs)
        self.server = server
        self.command = command
        self.inputs: dict[str, str] = {}  # the files the command names, by content digest

    def metadata(self) -> dict[str, Any]:
        info = super().metadata()
        info["kind"] = "started-server"
        info["server"] = {
            "command": self.command,
            "log": str(self.log_path),
            "shared_from_controller": self.server is None,
        }
        info["inputs"] = dict(self.inputs)
        return redact_data(info)

    def shared_server(self) -> dict[str, str]:
        """What xdist workers need to use this process's server instead of starting one."""
        if self.server is None:
            return {}
        return {"server_shared_url": self.server.base_url, "server_shared_log": str(self.log_path)}


class ServedCompletionsModel(ServedChatModel, CompletionsModel):
    """The started server asked on ``/v1/completions`` as a leaderboard handler asks: the life
    cycle of :class:`ServedChatModel` over the completions client."""
