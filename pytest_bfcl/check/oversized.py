"""Answers cut at ``--bfcl-max-response-bytes``: stored with a note, never scored by content."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.scoring import TRUNCATED


def oversized_answer_verdict(generation: Any, category: str) -> Verdict | None:
    """The verdict of an answer cut at ``--bfcl-max-response-bytes``: a failure in every
    category. Deliberate deviation: the reference keeps any answer whole; here an oversized
    one is never scored by its content, because a cut answer could pass irrelevance (no call)
    or relevance (a call) by accident."""
    if generation.finish_reason != TRUNCATED:
        return None
    return Verdict(
        id=generation.id,
        category=category,
        valid=False,
        error_type="response:too_large",
        errors=[str(generation.result)],
        model_output=generation.result,
    )
