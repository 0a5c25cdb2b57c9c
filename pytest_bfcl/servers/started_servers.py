"""An OpenAI-compatible client bound to servers the session started (``vllm:`` replicas,
``--bfcl-server-cmd``): in the process that started them, it owns them; in an xdist worker, it
uses the controller's, knowing only their addresses and logs.

What the two kinds share: a replica whose process died is given up at once with its log (a
worker reads the notice the controller writes beside the log), and closing the model stops the
servers it owns.

The life cycle is layered over a client: the chat client here, and, combined with
:class:`~pytest_bfcl.models.completions.CompletionsModel` (which derives from the chat client),
the completions route of the leaderboard's open-weight handlers. Each layer takes its own
arguments by keyword and passes the client's on, so one class combines both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_bfcl.models.openai_chat import OpenAIChatModel
from pytest_bfcl.servers.server_process import ServerProcess, published_death


class StartedServersModel(OpenAIChatModel):
    def __init__(
        self,
        *client_args: Any,
        servers: list[ServerProcess],
        log_paths: list[Path],
        **client_kwargs: Any,
    ) -> None:
        """``client_args``, ``client_kwargs``: the client's own (its endpoint first);
        ``servers``: the ones this process started (none in an xdist worker);
        ``log_paths``: each base URL's server log, in the order of the endpoint's URLs."""
        super().__init__(*client_args, **client_kwargs)
        self.servers = servers
        self.log_paths = log_paths
        self._server_at = {s.base_url: s for s in servers}
        self._log_at = dict(zip(self.settings.base_urls, log_paths, strict=True))
        for server in servers:
            server.publish_death()  # for xdist workers, which cannot see the process

    @property
    def log_path(self) -> Path:
        return self.log_paths[0]

    def dead_replica(self, base_url: str) -> str | None:
        """A server's process is gone: why, with its log (known at once, no retries needed;
        an xdist worker reads what the controller wrote beside the log)."""
        base_url = base_url.rstrip("/")
        server = self._server_at.get(base_url)
        if server is not None:
            return server.death_notice()
        log = self._log_at.get(base_url)
        return published_death(log) if log is not None else None

    def close(self) -> None:
        super().close()
        for server in self.servers:
            server.stop()
