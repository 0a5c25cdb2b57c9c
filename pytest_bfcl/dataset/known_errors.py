"""Entries whose ground truth is known to be wrong upstream, from the project's data file
``data/known_ground_truth_errors.json``: each with the upstream reference that reports it and,
where one can be stated, the corrected ground truth.

Such an entry can fail a correct model and pass a wrong one, so by default the gate leaves it
out (``--bfcl-known-errors=exclude``) while the scores stay as the leaderboard computes them;
``include`` compares it like any other entry, ``correct`` scores it against the corrected
answer (entries without a stated fix stay out of the gate). Every report marks them.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_bfcl.dataset.models import AgenticAnswer, Answer, AstAnswer, MultiTurnAnswer
from pytest_bfcl.resources import project_json

DATA_FILE = "known_ground_truth_errors.json"
FORMAT = "pytest-bfcl-known-errors/1"

Policy = Literal["exclude", "include", "correct"]


class Fix(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ground_truth: Any


class KnownError(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    category: str
    reference: str  # where upstream reports it (an issue or pull request)
    problem: str  # what is wrong, in a sentence
    fix: Fix | None = None  # the corrected ground truth, when one can be stated

    def note(self) -> str:
        return f"known ground-truth error: {self.problem} ({self.reference})"


class KnownErrorsFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str
    release: str
    entries: list[KnownError]


@cache
def known_errors() -> dict[str, KnownError]:
    """The project's list, by entry id (validated once per process)."""
    raw = project_json(DATA_FILE)
    try:
        listed = KnownErrorsFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise ValueError(f"data file {DATA_FILE} is malformed at {where}: {first['msg']}") from None
    if listed.format != FORMAT:
        raise ValueError(f"data file {DATA_FILE}: expected format {FORMAT!r}")
    return {entry.id: entry for entry in listed.entries}


def corrected_answer(error: KnownError, pinned: Answer | None) -> Answer | None:
    """The corrected ground truth in the pinned answer's own type, or ``None`` without a fix."""
    if error.fix is None:
        return None
    kind: type[AstAnswer] | type[MultiTurnAnswer] | type[AgenticAnswer] = (
        type(pinned) if pinned is not None else AstAnswer
    )
    return kind.model_validate({"id": error.id, "ground_truth": error.fix.ground_truth})


def gate_exclusions(ids: set[str], policy: Policy) -> frozenset[str]:
    """Of these scored entries, the ones the gate leaves out under ``policy``."""
    listed = known_errors()  # looked up at call time: tests put their own list in its place
    if policy == "include":
        return frozenset()
    if policy == "correct":
        return frozenset(i for i in ids if i in listed and listed[i].fix is None)
    return frozenset(i for i in ids if i in listed)


def answer_under_policy(entry_id: str, pinned: Answer | None, policy: Policy) -> Answer | None:
    """The ground truth an entry is scored against: the pinned one, or its correction for an
    entry with a known ground-truth error under ``correct``."""
    if policy == "correct":
        error = known_errors().get(entry_id)
        if error is not None and error.fix is not None:
            return corrected_answer(error, pinned)
    return pinned


def note_under_policy(entry_id: str, policy: Policy) -> str | None:
    """Why an entry's ground truth is known to be wrong upstream, or ``None``."""
    error = known_errors().get(entry_id)
    if error is None:
        return None
    if policy == "correct" and error.fix is not None:
        return f"{error.note()}; scored against the corrected answer"
    return error.note()
