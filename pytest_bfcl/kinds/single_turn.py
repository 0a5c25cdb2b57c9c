"""Single-turn kinds: AST-checked calls, relevance (a call is due) and irrelevance (none is),
all scored by :func:`pytest_bfcl.check.single_turn.evaluate_single_turn` on the declared kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_bfcl.dataset.categories import Category, Kind
from pytest_bfcl.kinds.base import KindSpec, RunContext

if TYPE_CHECKING:
    from pytest_bfcl.check.verdict import Verdict
    from pytest_bfcl.dataset.load import Dataset
    from pytest_bfcl.dataset.models import Answer, Entry


class SingleTurnKind(KindSpec):
    """One answer, scored by the single-turn checker of the category's declared kind."""

    def score(self, entry: Entry, answer: Answer | None, result: Any, run: RunContext) -> Verdict:
        from pytest_bfcl.check.single_turn import evaluate_single_turn

        return evaluate_single_turn(entry, answer, result, run.scoring)


class AstKind(SingleTurnKind):
    """Calls decoded and checked against the ground truth under the category's declared rules
    (``Category.checker``)."""

    kind = Kind.AST

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        from pytest_bfcl.dataset.models import AstAnswer

        return dict(dataset.positional_answers(category, AstAnswer))


class RelevanceKind(SingleTurnKind):
    """Scored by whether the answer holds a call: relevance expects one (its arguments are not
    checked), irrelevance expects none. No ground truth."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind  # type: ignore[misc]


AST = AstKind()
RELEVANCE = RelevanceKind(Kind.RELEVANCE)
IRRELEVANCE = RelevanceKind(Kind.IRRELEVANCE)
