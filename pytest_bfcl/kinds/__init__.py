"""The kinds of category, one module each, and the registry that maps a category to its kind.

Adding a kind: a :class:`~pytest_bfcl.kinds.base.KindSpec` subclass in a module of its own, a
member of :class:`~pytest_bfcl.dataset.categories.Kind`, and an entry in :data:`KINDS`; see
docs/architecture.md for the executable kind as a worked example. Kind modules import their
checkers and data models inside their methods: the plugin reads this registry at start-up (the
markers), before anything heavy may load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_bfcl.dataset.categories import (
    CATEGORIES,
    Category,
    Kind,
    category_of_id,
    index_of_id,
    is_memory_prerequisite,
)
from pytest_bfcl.kinds.agentic import MEMORY, WEB_SEARCH
from pytest_bfcl.kinds.base import KindSpec, RunContext
from pytest_bfcl.kinds.executable import EXECUTABLE
from pytest_bfcl.kinds.format_sensitivity import FORMAT_SENSITIVITY
from pytest_bfcl.kinds.multi_turn import MULTI_TURN
from pytest_bfcl.kinds.single_turn import AST, IRRELEVANCE, RELEVANCE

if TYPE_CHECKING:
    from pytest_bfcl.dataset.fetch import DataSource
    from pytest_bfcl.dataset.load import Dataset

__all__ = ["KINDS", "KindSpec", "RunContext", "kind_of", "open_dataset", "sort_key"]

KINDS: dict[Kind, KindSpec] = {
    spec.kind: spec
    for spec in (
        AST,
        RELEVANCE,
        IRRELEVANCE,
        MULTI_TURN,
        MEMORY,
        WEB_SEARCH,
        FORMAT_SENSITIVITY,
        EXECUTABLE,
    )
}


def sort_key(entry_id: str) -> tuple[int, str, int]:
    """The reference's order of ids in a result file: memory prerequisites (their ids say so),
    then by kind (``KindSpec.result_order``: web search, single-turn, multi-turn, memory
    questions), category and index."""
    category = category_of_id(entry_id)
    if is_memory_prerequisite(entry_id):
        order = 0
    elif category in CATEGORIES:
        order = kind_of(category).result_order
    else:
        order = KindSpec.result_order
    return (order, category, index_of_id(entry_id))


def kind_of(category: str | Category) -> KindSpec:
    """The kind a category declares (by name: a registered category)."""
    cat = CATEGORIES[category] if isinstance(category, str) else category
    return KINDS[cat.kind]


def open_dataset(source: DataSource) -> Dataset:
    """The data directory's :class:`Dataset`, each category read as its kind reads it."""
    from pytest_bfcl.dataset.load import Dataset  # pydantic: not at the plugin's start-up

    return Dataset(source, kind_of)
