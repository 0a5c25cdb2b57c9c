"""Single-turn kinds: AST-checked calls, relevance (a call is due) and irrelevance (none is)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_bfcl.dataset.categories import Category, Kind
from pytest_bfcl.kinds.base import KindSpec, RunContext

if TYPE_CHECKING:
    from pytest_bfcl.check.verdict import Verdict
    from pytest_bfcl.dataset.load import Dataset
    from pytest_bfcl.dataset.models import Answer, Entry


class AstKind(KindSpec):
    """One answer of calls, decoded and checked against the ground truth under the category's
    declared rules (``Category.checker``)."""

    kind = Kind.AST

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        from pytest_bfcl.dataset.models import AstAnswer

        return dict(dataset.positional_answers(category, AstAnswer))

    def score(self, entry: Entry, answer: Answer | None, result: Any, run: RunContext) -> Verdict:
        from pytest_bfcl.check.single_turn import evaluate_ast
        from pytest_bfcl.dataset.models import AstAnswer

        if not isinstance(answer, AstAnswer):
            raise ValueError(f"{entry.id}: AST checking needs the ground truth")
        return evaluate_ast(entry, answer, result, run.scoring)


class RelevanceKind(KindSpec):
    """Scored by whether the answer holds a call: relevance expects one (its arguments are not
    checked), irrelevance expects none. No ground truth."""

    def __init__(self, kind: Kind, expects_call: bool) -> None:
        self.kind = kind  # type: ignore[misc]
        self.expects_call = expects_call

    def score(self, entry: Entry, answer: Answer | None, result: Any, run: RunContext) -> Verdict:
        from pytest_bfcl.check.single_turn import evaluate_relevance

        return evaluate_relevance(entry, result, run.scoring, expects_call=self.expects_call)


AST = AstKind()
RELEVANCE = RelevanceKind(Kind.RELEVANCE, expects_call=True)
IRRELEVANCE = RelevanceKind(Kind.IRRELEVANCE, expects_call=False)
