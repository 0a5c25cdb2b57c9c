"""The outcome of checking one entry: the data that reports, junit and baselines read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Verdict(BaseModel):
    # protected_namespaces: pydantic before 2.10 warns of any field named model_* (model_output)
    model_config = ConfigDict(frozen=True, protected_namespaces=())

    id: str
    category: str
    valid: bool
    error_type: str | None = None
    errors: list[Any] = []
    model_output: Any = None  # the raw output as stored (tool calls or text)
    decoded: Any = None  # what the decoder made of it, when decoding succeeded
    expected: Any = None  # the ground truth, where the category has one
    report: list[str] | None = None  # readable detail lines for the failure report
    # An entry asked several times (--bfcl-samples): how many of its samples passed. ``valid``
    # is then whether every one did; the rest describes the first sample that failed.
    passes: int | None = None
    samples: int | None = None


def combine_samples(verdicts: list[Verdict]) -> Verdict:
    """One verdict for an entry's samples: passes out of K, valid when all passed, explained
    by the first sample that failed."""
    count = len(verdicts)
    passes = sum(v.valid for v in verdicts)
    failed = next(((n, v) for n, v in enumerate(verdicts) if not v.valid), None)
    if failed is None:
        return verdicts[0].model_copy(update={"passes": passes, "samples": count})
    number, first = failed
    note = f"{passes} of {count} samples passed; sample {number + 1} failed"
    errors = [f"{note}: {first.errors[0]}" if first.errors else note, *first.errors[1:]]
    return first.model_copy(
        update={"valid": False, "passes": passes, "samples": count, "errors": errors}
    )
