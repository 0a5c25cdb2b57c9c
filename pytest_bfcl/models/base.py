"""The model interface: something that answers a task with a generation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.dataset.models import Answer, Entry


@dataclass(frozen=True)
class Task:
    """One entry to answer. ``answer`` is the ground truth; only the oracle may look at it."""

    entry: Entry
    answer: Answer | None


class Generation(BaseModel):
    """A model's raw output for one entry, in the reference's stored form, with measurements."""

    model_config = ConfigDict(frozen=True)

    id: str
    result: Any
    latency: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning: str | None = None  # reasoning content, when the server returns it
    finish_reason: str | None = None
    cached: bool = False  # answered from the response cache
    steps: int | None = None  # model queries made (multi-step categories)
    # Multi-step categories: per-turn latencies and token counts, and the inference log.
    details: dict[str, Any] | None = None


@dataclass(frozen=True)
class StepRequest:
    """One query in a multi-step conversation: the full history so far and the functions the
    model has been shown (raw docs, language hints applied; held-out ones once added). Both are
    shared with the conversation: read them, copy before changing."""

    task: Task
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    mode: str  # "fc" or "prompt"
    turn: int
    step: int


class StepReply(BaseModel):
    """The model's answer to one step. ``result`` is stored like a single-turn result: tool
    calls as ``[{name: arguments_json}]`` or the text."""

    model_config = ConfigDict(frozen=True)

    result: Any
    tool_call_ids: list[str] = []
    latency: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning: str | None = None
    cached: bool = False


class ModelSpecError(ValueError):
    """A ``--bfcl-model`` spelling that no handler can build."""


class NotGenerated(Exception):
    """The model has no output for this entry (e.g. a replay directory without it); the item is
    skipped with this reason rather than scored."""


@runtime_checkable
class Model(Protocol):
    name: str
    scoring: ScoringOptions

    def generate(self, task: Task) -> Generation: ...

    def metadata(self) -> dict[str, Any]: ...


@runtime_checkable
class StepModel(Protocol):
    """A model that can hold a multi-step conversation (multi-turn and agentic categories)."""

    def step(self, request: StepRequest) -> StepReply: ...
