"""Format sensitivity: copies of single-turn entries under 26 prompt formats, checked by the
AST rules of the category each was copied from. A diagnostic of prompting models: outside the
scores, and left out of function-calling runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_bfcl.dataset.categories import Category, Kind
from pytest_bfcl.kinds.base import RunContext
from pytest_bfcl.kinds.single_turn import SingleTurnKind

if TYPE_CHECKING:
    from pytest_bfcl.dataset.load import Dataset
    from pytest_bfcl.dataset.models import Answer, Entry

FC_REASON = "format sensitivity measures prompting models; run it with --bfcl-mode=prompt"


class FormatSensitivityKind(SingleTurnKind):
    kind = Kind.FORMAT_SENSITIVITY

    def load_entries(self, dataset: Dataset, category: Category) -> list[Entry]:
        return dataset.format_sensitivity_entries()

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        return dataset.format_sensitivity_answers(category)

    def skip_reason(self, run: RunContext) -> str | None:
        return FC_REASON if run.scoring.mode == "fc" else None


FORMAT_SENSITIVITY = FormatSensitivityKind()
