"""The leaderboard's score groups, in one table: name, label, members, how members combine,
weight in the V4 overall, and whether the regression gate compares the group. Aggregation,
the terminal and HTML tables, the gate and threshold names all read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_bfcl.dataset.categories import EXEC, MEMORY, MULTI_TURN, WEB_SEARCH


@dataclass(frozen=True)
class Group:
    name: str
    label: str
    members: tuple[str, ...]  # categories, or groups defined above it in GROUPS
    combine: Literal["mean", "count_weighted"] = "mean"
    weight: float | None = None  # its weight in the V4 overall (None: not a part of it)
    gated: bool = True  # compared by the regression gate
    nested: bool = False  # shown indented under the group before it
    # Outside the V4 benchmark: shown only when one of its categories ran.
    optional: bool = False


# In the order they are computed (members first). Non-Live is the mean of Simple (itself the mean
# of the three languages) and the other three; Live is weighted by entry counts.
GROUPS: tuple[Group, ...] = (
    Group(
        "simple",
        "Simple (py/java/js)",
        ("simple_python", "simple_java", "simple_javascript"),
        gated=False,
        nested=True,
    ),
    Group(
        "non_live",
        "Non-Live AST",
        ("simple", "multiple", "parallel", "parallel_multiple"),
        weight=10,
    ),
    Group(
        "live",
        "Live AST",
        ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"),
        combine="count_weighted",
        weight=10,
    ),
    # Named apart from its category ``irrelevance``: a group's name is never a category's, so
    # every report keyed by name gives each its own numbers.
    Group(
        "irrelevance_detection",
        "Irrelevance",
        ("irrelevance", "live_irrelevance"),
        weight=10,
    ),
    Group("relevance", "Relevance", ("live_relevance",), gated=False),
    Group(
        "multi_turn",
        "Multi-Turn",
        MULTI_TURN,
        weight=30,
    ),
    Group("web_search", "Web Search", WEB_SEARCH, nested=True),
    Group("memory", "Memory", MEMORY, nested=True),
    Group("agentic", "Agentic", ("web_search", "memory"), weight=40),
    # The first release's executable evaluation (opt-in categories): the unweighted mean of
    # the four exec categories, as its leaderboard reported it.
    Group(
        "exec_summary",
        "Exec Summary",
        EXEC,
        gated=False,
        optional=True,
    ),
)
BY_NAME = {group.name: group for group in GROUPS}

# The order of the terminal's and the HTML report's group table.
DISPLAY_ORDER = (
    "non_live", "simple", "live", "irrelevance_detection", "relevance", "multi_turn", "agentic",
    "web_search", "memory", "exec_summary",
)  # fmt: skip

OVERALL_WEIGHTS: dict[str, float] = {g.name: g.weight for g in GROUPS if g.weight is not None}
GATED = tuple(g.name for g in GROUPS if g.gated)
# Every name a threshold (--bfcl-min-score) may use besides category names.
SCORE_NAMES = frozenset({"overall", *BY_NAME})


def shown(name: str, ran: set[str]) -> bool:
    """Whether a group has a row in the tables, given the categories that ran."""
    group = BY_NAME[name]
    return not group.optional or any(m in ran for m in group.members)


def display_label(name: str) -> str:
    group = BY_NAME[name]
    return ("  " if group.nested else "") + group.label
