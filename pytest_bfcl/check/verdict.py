"""The outcome of checking one entry: the data that reports, junit and baselines read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    category: str
    valid: bool
    error_type: str | None = None
    errors: list[Any] = []
    model_output: Any = None  # the raw output as stored (tool calls or text)
    decoded: Any = None  # what the decoder made of it, when decoding succeeded
    expected: Any = None  # the ground truth, where the category has one
    report: list[str] | None = None  # readable detail lines for the failure report
