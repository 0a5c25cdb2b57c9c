"""What two harnesses sent, compared request by request: per category, the conversations
compared and identical, and each differing field with how many requests differ in it and one
example of each side's value.

Requests are grouped into conversations by their first user message (both harnesses send the
same question, whatever else differs). Within a group, requests identical on both sides (as
JSON objects: key order aside) are paired first; the rest are paired in the order of their
position in the conversation (turn, step) and compared field by field. A field is named by its
path with list positions as ``[*]`` (``input[*].role``), so one difference repeated at every
step is counted once per request, not once per message. A conversation (a first request) is
identical when every request of its group found an identical partner."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from pytest_bfcl.testing.scripted_answers import conversation_key, position

EXAMPLE_CHARS = 160  # how much of a differing value an example shows
MISSING = "(absent)"
UNPAIRED = "(the whole request: sent by one harness only)"


class FieldDifference(BaseModel):
    """A field that differs: in how many paired requests, and one example of each side."""

    path: str
    requests: int
    ours: str
    official: str


class CategoryRequests(BaseModel):
    """The comparison of one category's requests."""

    category: str
    conversations: int  # conversations held (first requests; either side's, the more)
    identical: int  # of them, whose every request was identical on our side
    requests_ours: int
    requests_official: int
    identical_requests: int
    differences: list[FieldDifference] = []
    problem: str | None = None  # why a side has no requests (its run failed)

    @property
    def agrees(self) -> bool:
        return (
            self.problem is None and not self.differences and self.identical == self.conversations
        )


def canonical(body: dict[str, Any]) -> str:
    """A request as comparable text: key order aside."""
    return json.dumps(body, sort_keys=True, ensure_ascii=True)


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return MISSING
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 3] + "..."


_ABSENT = object()


def field_differences(ours: Any, official: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, our value, official value) of every leaf where two JSON values differ; list
    positions are written ``[*]``, a list of another length differs at ``path[len]``."""
    if isinstance(ours, dict) and isinstance(official, dict):
        found = []
        for key in list(official) + [k for k in ours if k not in official]:
            found += field_differences(
                ours.get(key, _ABSENT), official.get(key, _ABSENT), f"{path}.{key}" if path else key
            )
        return found
    if isinstance(ours, list) and isinstance(official, list):
        found = []
        if len(ours) != len(official):
            found.append((f"{path}[len]", len(ours), len(official)))
        for mine, theirs in zip(ours, official, strict=False):
            found += field_differences(mine, theirs, f"{path}[*]")
        return found
    same = type(ours) is type(official) and ours == official
    return [] if same else [(path or "(body)", ours, official)]


def _paired(
    ours: list[dict[str, Any]], official: list[dict[str, Any]]
) -> tuple[int, list[tuple[dict[str, Any] | None, dict[str, Any] | None]]]:
    """The identical requests' count, and the other requests paired by position."""
    left = Counter(canonical(b) for b in ours)
    right = Counter(canonical(b) for b in official)
    same = left & right
    rest_ours = _without(ours, same)
    rest_official = _without(official, same)
    rest_ours.sort(key=lambda b: (position(b), canonical(b)))
    rest_official.sort(key=lambda b: (position(b), canonical(b)))
    pairs: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
    for index in range(max(len(rest_ours), len(rest_official))):
        mine = rest_ours[index] if index < len(rest_ours) else None
        theirs = rest_official[index] if index < len(rest_official) else None
        pairs.append((mine, theirs))
    return sum(same.values()), pairs


def _without(bodies: list[dict[str, Any]], matched: Counter[str]) -> list[dict[str, Any]]:
    left = Counter(matched)
    rest = []
    for body in bodies:
        key = canonical(body)
        if left[key]:
            left[key] -= 1
        else:
            rest.append(body)
    return rest


def _conversations(bodies: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for body in bodies:
        groups.setdefault(conversation_key(body), []).append(body)
    return groups


def _first_requests(bodies: list[dict[str, Any]]) -> int:
    return sum(1 for b in bodies if position(b) == (0, 0))


def compare_category(
    category: str, ours: list[dict[str, Any]], official: list[dict[str, Any]]
) -> CategoryRequests:
    """One category's requests, ours against the official harness's."""
    mine, theirs = _conversations(ours), _conversations(official)
    conversations = identical = identical_requests = 0
    counts: Counter[str] = Counter()
    examples: dict[str, tuple[str, str]] = {}
    for key in list(theirs) + [k for k in mine if k not in theirs]:
        group_ours, group_official = mine.get(key, []), theirs.get(key, [])
        # the conversations either harness held (a group's first requests), at least one
        held = max(_first_requests(group_official), _first_requests(group_ours), 1)
        conversations += held
        same, pairs = _paired(group_ours, group_official)
        identical_requests += same
        if not pairs:
            identical += held
            continue
        for left, right in pairs:
            found = (
                [(UNPAIRED, left, right)]
                if left is None or right is None
                else field_differences(left, right)
            )
            for path in dict.fromkeys(p for p, _, _ in found):
                counts[path] += 1
            for path, value_ours, value_official in found:
                if path not in examples:
                    examples[path] = _example(path, value_ours, value_official)
    differences = [
        FieldDifference(
            path=path, requests=count, ours=examples[path][0], official=examples[path][1]
        )
        for path, count in counts.most_common()
    ]
    return CategoryRequests(
        category=category,
        conversations=conversations,
        identical=identical,
        requests_ours=len(ours),
        requests_official=len(official),
        identical_requests=identical_requests,
        differences=differences,
    )


def _example(path: str, ours: Any, official: Any) -> tuple[str, str]:
    """Both sides' values as shown: long texts around where they first part."""
    if path == UNPAIRED:
        return _shown_request(ours), _shown_request(official)
    if isinstance(ours, str) and isinstance(official, str):
        start = max(0, _first_difference(ours, official) - EXAMPLE_CHARS // 4)
        if start:
            return f"...{_shown(ours[start:])}", f"...{_shown(official[start:])}"
    return _shown(ours), _shown(official)


def _first_difference(left: str, right: str) -> int:
    pairs = enumerate(zip(left, right, strict=False))
    return next((i for i, (a, b) in pairs if a != b), min(len(left), len(right)))


def _shown_request(body: dict[str, Any] | None) -> str:
    if body is None:
        return "(not sent)"
    turn, step = position(body)
    return f"a request at turn {turn}, step {step}"


def render_requests(results: list[CategoryRequests], header: str) -> str:
    """The comparison as text: a table, then each category's differing fields."""
    lines = [header, ""]
    lines.append(
        f"{'category':<34} {'conversations':>13} {'identical':>9} {'requests ours/official':>24}"
    )
    for result in results:
        sent = f"{result.requests_ours}/{result.requests_official}"
        lines.append(
            f"{result.category:<34} {result.conversations:>13} {result.identical:>9} {sent:>24}"
        )
    for result in results:
        if result.problem:
            lines += ["", f"{result.category}: not compared: {result.problem}"]
        elif result.differences:
            lines += ["", f"{result.category}: fields that differ"]
            for diff in result.differences:
                lines.append(
                    f"  {diff.path}: {diff.requests} request(s); e.g. ours {diff.ours}, "
                    f"official {diff.official}"
                )
    agree = all(r.agrees for r in results)
    lines += ["", "every request identical" if agree else "requests differ (see above)"]
    return "\n".join(lines)
