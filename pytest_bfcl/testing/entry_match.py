"""Which entry a request to the fake server asks, among the single-turn entries that share its
question: a simple entry and the same question among several functions, or with none that fits
(irrelevance), are told apart by the functions the request offers."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pytest_bfcl.dataset.models import Entry

Reply = TypeVar("Reply")


def asked_entry(candidates: list[tuple[Entry, Reply]], body: dict[str, Any]) -> tuple[Entry, Reply]:
    """The candidate whose functions the request offers, all of them, the most of them and
    the most like them; the first where none fits (entries that repeat a request exactly,
    functions included, cannot be told apart)."""
    if len(candidates) == 1:
        return candidates[0]
    shown = json.dumps(body.get("tools", [])) + " ".join(
        str(m.get("content")) for m in body["messages"] if m.get("role") == "system"
    )
    fitting = [c for c in candidates if all(offers(shown, d.name) for d in c[0].function)]
    return max(fitting, key=lambda c: likeness(shown, c[0])) if fitting else candidates[0]


def offers(shown: str, name: str) -> bool:
    """Whether a request's tools or system prompt name a function (as sent: dots become
    underscores where the endpoint's names allow no dots)."""
    return any(f'"{n}"' in shown or f"'{n}'" in shown for n in {name, name.replace(".", "_")})


def likeness(shown: str, entry: Entry) -> tuple[int, int]:
    """How much of an entry's functions a request shows: how many, then how many of their
    descriptions and their parameters' descriptions."""
    texts = [d.description for d in entry.function]
    for doc in entry.function:
        texts += [str(p.get("description", "")) for p in doc.parameters.properties.values()]
    return len(entry.function), sum(json.dumps(t)[1:-1] in shown for t in texts if t)
