"""Pydantic models of the benchmark's entries and ground truth (the data boundary)."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.prompt_format import DEFAULT_FORMAT, PromptFormat


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class Message(_Frozen):
    role: str
    content: str


class Parameters(_Frozen):
    """The ``parameters`` object of a function doc. Property schemas stay plain dicts: they are
    read by the checker and the tool converters, which walk arbitrary JSON-schema-like trees."""

    type: str = "dict"
    properties: dict[str, dict[str, Any]] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)


class FunctionDoc(_Frozen):
    name: str
    description: str = ""
    parameters: Parameters = Field(default_factory=Parameters)
    response: dict[str, Any] | None = None


class Entry(_Frozen):
    """One benchmark question: single-turn, multi-turn, memory or web search."""

    id: str
    question: list[list[Message]]
    function: list[FunctionDoc] = Field(default_factory=list)
    # multi-turn and agentic
    initial_config: dict[str, Any] | None = None
    involved_classes: list[str] = Field(default_factory=list)
    missed_function: dict[str, list[str]] | None = None
    # docs of held-out functions, by turn index (as a string); moved out of ``function``
    held_out_functions: dict[str, list[FunctionDoc]] = Field(default_factory=dict)
    # memory
    scenario: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    # format sensitivity: the prompt config string, None for the default prompt
    format_config: str | None = None
    # ``function`` exactly as the data has it (key order, absent keys), aligned with it: prompts
    # and tools are rendered from these. Not validated again, not dumped.
    source_function: Any = Field(default=None, exclude=True, repr=False)
    # the held-out docs exactly as the data has them, by turn index (as a string)
    held_out_sources: Any = Field(default=None, exclude=True, repr=False)

    def function_sources(self) -> list[dict[str, Any]]:
        """Deep copies of the raw function docs (safe to modify)."""
        if self.source_function is not None:
            return copy.deepcopy(self.source_function)
        return [doc.model_dump(exclude_unset=True) for doc in self.function]

    def held_out_sources_for(self, turn: int) -> list[dict[str, Any]] | None:
        """Deep copies of the raw docs added at this turn, or ``None`` (not a held-out turn)."""
        key = str(turn)
        if key not in self.held_out_functions:
            return None
        if self.held_out_sources is not None:
            return copy.deepcopy(self.held_out_sources[key])
        return [doc.model_dump(exclude_unset=True) for doc in self.held_out_functions[key]]

    @property
    def category(self) -> str:
        return category_of_id(self.id)

    @property
    def language(self) -> str:
        """The language whose values the checker expects: the category's, except that format
        sensitivity checks with Python types whatever the source category."""
        from pytest_bfcl.dataset.categories import CATEGORIES

        return "python" if self.format_config else CATEGORIES[self.category].language

    @property
    def prompt_format(self) -> PromptFormat:
        """How a prompting model is asked to write its calls for this entry."""
        return PromptFormat.parse(self.format_config) if self.format_config else DEFAULT_FORMAT

    @property
    def source_id(self) -> str:
        """The id of the original entry (differs from ``id`` for format sensitivity)."""
        return self.id.rsplit(":", 1)[-1]


class AstAnswer(_Frozen):
    """Ground truth of a single-turn AST entry: one ``{function: {param: [candidates]}}`` per
    expected call; ``""`` among the candidates marks a parameter that may be omitted."""

    id: str
    ground_truth: list[dict[str, dict[str, list[Any]]]]


class MultiTurnAnswer(_Frozen):
    """Ground truth of a multi-turn entry: the expected call strings of each turn."""

    id: str
    ground_truth: list[list[str]]


class AgenticAnswer(_Frozen):
    """Ground truth of a memory or web-search question: acceptable answer strings."""

    id: str
    ground_truth: list[str]
    source: Any = None
    num_hops: int | None = None


Answer = AstAnswer | MultiTurnAnswer | AgenticAnswer
