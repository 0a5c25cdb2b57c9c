"""What the controller hands each xdist worker, as one typed object in the worker input, and
the session name every process of a run shares."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pydantic import BaseModel

HANDOFF_INPUT = "bfcl_handoff"  # the worker-input key of the handoff
REPLICAS_OUTPUT = "bfcl_replicas"  # worker output: how each server replica fared there
# worker input: what the controller's model read (a replay's result files), packed
MODEL_STATE_INPUT = "bfcl_model_state"
SESSION_KEY = pytest.StashKey[str]()


class WorkerHandoff(BaseModel):
    """What a worker starts from: the controller's session name (the workers of one session
    share the memory snapshots made in it), the entries its preflight found unavailable and
    the server replicas its checks took out of rotation (a worker does not probe again), and
    the servers it started (settings that point the worker's model at them), whether the
    controller replays a BFCL item's events sent as one message (:mod:`.batching`), and the
    ids its selection collects per category (read and checked there once: a worker collects
    them without reading the data, and reads a category when it scores one of its entries)."""

    session: str
    unavailable: dict[str, str] = {}
    ejected: dict[str, str] = {}
    servers: dict[str, Any] = {}
    batched: bool = False
    collection: dict[str, list[str]] = {}

    def worker_input(self) -> dict[str, str]:
        return {HANDOFF_INPUT: self.model_dump_json()}

    @classmethod
    def received(cls, config: pytest.Config) -> WorkerHandoff | None:
        """An xdist worker's handoff; ``None`` in the controller or a single process."""
        workerinput = getattr(config, "workerinput", None)
        if not workerinput or HANDOFF_INPUT not in workerinput:
            return None
        return cls.model_validate_json(workerinput[HANDOFF_INPUT])


def model_state_input(model: Any) -> dict[str, bytes]:
    """What the controller's model read, for each worker to take over rather than read again
    (a replay model's result files, read by the controller's checks); nothing for a model
    that reads nothing."""
    read_state = getattr(model, "read_state", None)
    packed = read_state() if callable(read_state) else None
    return {MODEL_STATE_INPUT: packed} if isinstance(packed, bytes) else {}


def take_model_state(config: pytest.Config, model: Any) -> None:
    """A worker's model takes over what the controller's read (:func:`model_state_input`)."""
    packed = getattr(config, "workerinput", {}).get(MODEL_STATE_INPUT)
    take = getattr(model, "take_read_state", None)
    if isinstance(packed, bytes) and callable(take):
        take(packed)


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (xdist gives workers their input)."""
    return hasattr(config, "workerinput")


def session_id(config: pytest.Config) -> str:
    """The controller names the session; xdist workers get the name in their handoff
    (:func:`pytest_bfcl.plugin.pytest_configure_node`)."""
    handoff = WorkerHandoff.received(config)
    if handoff is not None:
        return handoff.session
    if SESSION_KEY not in config.stash:
        config.stash[SESSION_KEY] = uuid.uuid4().hex
    return config.stash[SESSION_KEY]
