"""Answers cut at ``--bfcl-max-response-bytes``, and requests refused as longer than the
model's context window: stored with a note, never scored by content."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.scoring import (
    CONTEXT_ERROR_TYPE,
    CONTEXT_EXCEEDED,
    ENTRY_BUDGET_ERROR_TYPE,
    ENTRY_BUDGET_EXCEEDED,
    PROMPT_FILTERED,
    PROMPT_FILTERED_ERROR_TYPE,
    TRUNCATED,
)

# The error type of each finish reason that fails an entry whatever its content.
_UNSCORED = {
    TRUNCATED: "response:too_large",
    CONTEXT_EXCEEDED: CONTEXT_ERROR_TYPE,
    ENTRY_BUDGET_EXCEEDED: ENTRY_BUDGET_ERROR_TYPE,
    PROMPT_FILTERED: PROMPT_FILTERED_ERROR_TYPE,
}


def oversized_answer_verdict(generation: Any, category: str) -> Verdict | None:
    """The verdict of an answer cut at ``--bfcl-max-response-bytes``: a failure in every
    category. Deliberate deviation: the reference keeps any answer whole; here an oversized
    one is never scored by its content, because a cut answer could pass irrelevance (no call)
    or relevance (a call) by accident.

    A request the server refused as longer than the model's context window fails the same way,
    as the leaderboard's handlers score it (their error text is the stored answer), and so does
    a conversation that outgrew ``--bfcl-max-entry-bytes`` (the reference has no such bound; it
    would hold and resend the history until memory or the server gives out)."""
    error_type = _UNSCORED.get(str(generation.finish_reason))
    if error_type is None:
        return None
    return Verdict(
        id=generation.id,
        category=category,
        valid=False,
        error_type=error_type,
        errors=[str(generation.result)],
        model_output=generation.result,
    )
