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


class NotGenerated(Exception):
    """The model has no output for this entry (e.g. a replay directory without it); the item is
    skipped with this reason rather than scored."""


@runtime_checkable
class Model(Protocol):
    name: str
    scoring: ScoringOptions

    def generate(self, task: Task) -> Generation: ...

    def metadata(self) -> dict[str, Any]: ...
