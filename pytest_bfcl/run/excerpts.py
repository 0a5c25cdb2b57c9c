"""What is kept of a conversation ended by its budget (``--bfcl-max-entry-bytes``): its log,
reasoning and responses cut to excerpts, and its answers dropped from the response cache; and
of one under its budget that answered megabytes: its reasoning cut to excerpts, its answers
dropped from the cache.

Such an entry is the model's failure whatever it said, and what it said was a flood: kept
whole, every hostile entry would leave tens of megabytes in the results file and the cache (a
112-entry flood wrote gigabytes) and in the memory of the process writing them. An excerpt
of each text still shows what the model did."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.models.base import Generation

EXCERPT_CHARS = 2000  # the start of each text kept
EXCERPT_ITEMS = 50  # the first items of each list kept
# A conversation under its budget whose answers (as echoed, with their reasoning) add up to
# more than this keeps its reasoning as excerpts in its record, and its answers leave the
# cache: a model echoing megabytes of reasoning at every step would otherwise write each of
# them several times (results, cache) for every entry. A reasoning model's whole conversation
# is some hundred kB.
ANSWERS_KEPT_WHOLE = 2 * 2**20


def excerpt(value: Any) -> Any:
    """``value`` with every text cut to :data:`EXCERPT_CHARS` characters and every list to
    :data:`EXCERPT_ITEMS` items, each cut saying how much there was."""
    if isinstance(value, str):
        if len(value) <= EXCERPT_CHARS:
            return value
        return f"{value[:EXCERPT_CHARS]}... [cut: {len(value):,} characters in all]"
    if isinstance(value, dict):
        return {key: excerpt(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        kept = [excerpt(item) for item in value[:EXCERPT_ITEMS]]
        if len(value) > EXCERPT_ITEMS:
            kept.append(f"[cut: {len(value):,} items in all]")
        return kept
    return value


def _log_without_long_reasoning(turn: Any) -> Any:
    """A turn of the inference log with each step's ``reasoning_content`` cut to an excerpt."""
    if not isinstance(turn, dict):
        return turn
    return {
        key: [
            {**m, "reasoning_content": excerpt(m["reasoning_content"])}
            if isinstance(m, dict) and "reasoning_content" in m
            else m
            for m in step
        ]
        if isinstance(step, list)
        else step
        for key, step in turn.items()
    }


def with_reasoning_excerpts(generation: Generation) -> Generation:
    """The generation with every reasoning text cut to an excerpt; its calls, results and the
    rest of its log kept whole (it is scored as it is)."""
    details = dict(generation.details or {})
    if "reasoning_content" in details:
        details["reasoning_content"] = excerpt(details["reasoning_content"])
    if isinstance(details.get("inference_log"), list):
        details["inference_log"] = [
            _log_without_long_reasoning(t) for t in details["inference_log"]
        ]
    return generation.model_copy(
        update={"reasoning": excerpt(generation.reasoning), "details": details}
    )
