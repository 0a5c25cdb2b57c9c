"""A team's own categories: BFCL-format question and answer files, checked like the benchmark."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from pytest_bfcl.dataset.categories import (
    CATEGORIES,
    Category,
    Kind,
    register_category,
    unregister_custom_categories,
)
from pytest_bfcl.dataset.groups import SCORE_NAMES
from pytest_bfcl.printable import printable

__all__ = ["CustomCategory", "add_custom_categories", "unregister_custom_categories"]


class CustomCategory(BaseModel):
    """One extra category. Its name is ASCII letters, digits and underscores (at most 64);
    entry ids must read ``<name>_<number>`` (ASCII digits), as in the benchmark."""

    model_config = ConfigDict(frozen=True)

    name: str
    questions: Path  # JSON Lines of {"id", "question", "function"}
    answers: Path | None = None  # JSON Lines of {"id", "ground_truth"}; none for irrelevance
    kind: Literal["ast", "irrelevance", "relevance"] = "ast"
    # Which AST rules apply: one call, one of several functions, parallel calls, or both.
    checker: Literal["simple", "multiple", "parallel", "parallel_multiple"] = "simple"
    language: Literal["python", "java", "javascript"] = "python"
    group: str = "custom"

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_]{1,64}", value):
            raise ValueError(
                f"category name '{printable(value, 80)}': use ASCII letters, digits and "
                "underscores, at most 64"
            )
        return value

    def category(self) -> Category:
        if self.kind == "ast" and self.answers is None:
            raise ValueError(f"custom category {self.name}: AST categories need an answers file")
        return Category(
            name=self.name,
            group=self.group,
            kind=Kind(self.kind),
            question_file=str(self.questions.resolve()),
            answer_file=str(self.answers.resolve()) if self.answers else None,
            language=self.language,
            checker=self.checker,
        )


def add_custom_categories(categories: list[CustomCategory]) -> list[str]:
    """Register categories for this session; returns their names. A name of the benchmark's
    own cannot be redefined."""
    names = []
    for custom in categories:
        category = custom.category()
        existing = CATEGORIES.get(category.name)
        if existing is not None and not existing.custom:
            raise ValueError(f"{category.name!r} is a benchmark category; choose another name")
        if category.name in SCORE_NAMES:
            # a score of its own in every report: a category of that name would share it
            raise ValueError(f"{category.name!r} names a score group; choose another name")
        register_category(category)
        names.append(category.name)
    return names
