"""The markers of BFCL items: ``bfcl``, ``bfcl_<category>``, ``bfcl_<group>`` and the agentic
kinds, registered so that ``--strict-markers`` accepts them."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from pytest_bfcl.dataset.categories import Category
from pytest_bfcl.kinds import kind_of


def marker_names(category: Category) -> list[str]:
    names = ["bfcl", f"bfcl_{category.name}", f"bfcl_{category.group}"]
    marker = kind_of(category).marker
    if marker:
        names.append(f"bfcl_{marker}")
    return list(dict.fromkeys(names))


def register_markers(config: pytest.Config, categories: Iterable[Category]) -> None:
    names = dict.fromkeys(n for c in categories for n in marker_names(c))
    for name in names:
        config.addinivalue_line("markers", f"{name}: pytest-bfcl entries ({name})")
