"""What is kept of a conversation ended by its budget (``--bfcl-max-entry-bytes``): its log,
reasoning and responses cut to excerpts, and its answers dropped from the response cache.

Such an entry is the model's failure whatever it said, and what it said was a flood: kept
whole, every hostile entry would leave tens of megabytes in the results file and the cache (a
112-entry flood wrote gigabytes) and in the memory of the process writing them. An excerpt
of each text still shows what the model did."""

from __future__ import annotations

from typing import Any

EXCERPT_CHARS = 2000  # the start of each text kept
EXCERPT_ITEMS = 50  # the first items of each list kept


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
