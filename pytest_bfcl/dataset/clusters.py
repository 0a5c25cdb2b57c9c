"""Clusters of entries that are not independent tasks, derived from the data: the intervals of
a score treat a cluster as one unit of evidence.

- A multi-turn entry belongs to the conversation that starts from its environment state (its
  ``initial_config`` and involved classes): the four multi-turn categories pose variants of
  the same conversations (808 entries from 208 starting states, most of them in all four).
- A single-turn entry belongs to its function set: live entries were gathered from real users
  who asked many questions of one API (live_irrelevance: 884 entries, 399 function sets, up to
  91 entries on one).
- Agentic entries share a fixed toolkit, not a task: each is its own cluster.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from pytest_bfcl.dataset.models import Entry


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def cluster_key(entry: Entry, category: str) -> str:
    """The cluster an entry of this category belongs to (its own id when none)."""
    if category.startswith("multi_turn"):
        return "conversation:" + _digest([entry.initial_config, sorted(entry.involved_classes)])
    if category.startswith(("memory", "web_search")) or not entry.function:
        return "entry:" + entry.id
    # The docs as the data has them (pydantic's JSON mode where they were built otherwise),
    # each as key-sorted JSON text: key order does not make two function sets different. The
    # texts hold no raw line break, so joined by one they digest without another encoding.
    sources = entry.source_function
    if not isinstance(sources, list):
        sources = [f.model_dump(mode="json") for f in entry.function]
    docs = sorted(json.dumps(doc, sort_keys=True, default=str) for doc in sources)
    return "functions:" + hashlib.sha256("\n".join(docs).encode("utf-8")).hexdigest()[:16]


def clusters_of(entries: Iterable[tuple[str, Entry]]) -> dict[str, str]:
    """Entry id -> cluster key, for (category, entry) pairs."""
    return {entry.id: cluster_key(entry, category) for category, entry in entries}
