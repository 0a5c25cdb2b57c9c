"""The events of one BFCL item travel from an xdist worker to the controller as one message.

xdist sends six messages per test (its start, three reports, its end, and the protocol's
completion), each serialised value by value in Python by its channel library, read by a
thread of the controller and handed to the controller's loop through a queue. For a stored
result that costs more than scoring it. A worker whose controller can receive them keeps a
BFCL item's events until the item's protocol completes, and sends them packed by
:mod:`marshal` inside that last message; the controller replays them, in their order, through
xdist's own handlers before it marks the item complete, so its hooks see what they saw before.

Anything else, an event that is not one of a BFCL item's, or events marshal refuses, travels
as xdist sends it (the events kept so far first, so the order holds).
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import Any

import pytest

BATCHED = "bfcl_events"  # the keyword of the completion message that carries the events
_KEPT = ("logstart", "testreport", "logfinish")
_COMPLETE = "runtest_protocol_complete"

Send = Callable[..., None]


class EventBatch:
    """A worker's ``sendevent``, keeping a BFCL item's events until its protocol completes."""

    def __init__(self, send: Send, prefix: str) -> None:
        self._send = send
        self._prefix = prefix
        self._kept: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, **kwargs: Any) -> None:
        if (
            name == "logstart"
            and not self._kept
            and str(kwargs.get("nodeid", "")).startswith(self._prefix)
        ):
            self._kept.append((name, kwargs))
            return
        if self._kept and name in _KEPT:
            self._kept.append((name, kwargs))
            return
        if self._kept and name == _COMPLETE:
            kept, self._kept = self._kept, []
            try:
                packed = marshal.dumps(kept, 4)
            except ValueError:  # a value only xdist's serialiser takes
                self._send_each(kept)
            else:
                self._send(name, **kwargs, **{BATCHED: packed})
                return
        self.flush()
        self._send(name, **kwargs)

    def flush(self) -> None:
        """Send what is kept, one message each, as xdist would have."""
        kept, self._kept = self._kept, []
        self._send_each(kept)

    def _send_each(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        for name, kwargs in events:
            self._send(name, **kwargs)


def worker_interactor(config: pytest.Config) -> Any:
    """xdist's plugin in a worker that sends its events, or None (another xdist shape)."""
    for plugin in config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor" and callable(
            getattr(plugin, "sendevent", None)
        ):
            return plugin
    return None


def batch_worker_events(config: pytest.Config, prefix: str) -> bool:
    """Send each BFCL item's events as one message from this worker; False where xdist's
    worker is of a shape this does not know (it then sends them as before)."""
    interactor = worker_interactor(config)
    if interactor is None:
        return False
    interactor.sendevent = EventBatch(interactor.sendevent, prefix)
    return True


def receive_batched_events(config: pytest.Config) -> bool:
    """Let this xdist controller replay the events a worker batched (:class:`EventBatch`);
    False where its loop is of a shape this does not know (workers then do not batch)."""
    dsession = config.pluginmanager.get_plugin("dsession")
    handlers = ("worker_logstart", "worker_testreport", "worker_logfinish", "worker_" + _COMPLETE)
    if dsession is None or not all(callable(getattr(dsession, h, None)) for h in handlers):
        return False
    complete = getattr(dsession, "worker_" + _COMPLETE)
    hook = config.hook

    def replayed(node: Any, **kwargs: Any) -> None:
        packed = kwargs.pop(BATCHED, None)
        if packed is not None:
            for name, event in marshal.loads(packed):
                if name == "testreport":
                    report = hook.pytest_report_from_serializable(config=config, data=event["data"])
                    dsession.worker_testreport(node=node, rep=report)
                else:
                    getattr(dsession, "worker_" + name)(node=node, **event)
        complete(node=node, **kwargs)

    setattr(dsession, "worker_" + _COMPLETE, replayed)
    return True
