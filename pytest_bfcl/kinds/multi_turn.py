"""Multi-turn: conversations on simulated applications, checked turn by turn on the
applications' state and the calls' results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_bfcl.dataset.categories import Category, Kind
from pytest_bfcl.kinds.base import KindSpec, RunContext

if TYPE_CHECKING:
    from pytest_bfcl.check.verdict import Verdict
    from pytest_bfcl.dataset.load import Dataset
    from pytest_bfcl.dataset.models import Answer, Entry
    from pytest_bfcl.models.base import Generation, Task


def solve_as_conversation(task: Task, run: RunContext, from_snapshot: bool = False) -> Generation:
    """A conversation run here when the model answers step by step (a memory question from
    its scenario's store as the prerequisites left it, ``from_snapshot``); otherwise the model
    answers the entry whole (replay, a project's whole-entry handler)."""
    from pytest_bfcl.models.base import StepModel

    if isinstance(run.model, StepModel):
        snapshot = run.wiring.question_snapshot(task.entry) if from_snapshot else None
        return run.wiring.conversation(task, run.model, snapshot).run()
    return run.model.generate(task)


class MultiTurnKind(KindSpec):
    kind = Kind.MULTI_TURN
    conversation = True
    result_order = 3

    def load_entries(self, dataset: Dataset, category: Category) -> list[Entry]:
        return dataset.backend_entries(category)

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        from pytest_bfcl.dataset.models import MultiTurnAnswer

        return dict(dataset.positional_answers(category, MultiTurnAnswer))

    def requests(self, entry: Entry) -> int:
        return 2 * len(entry.question)  # a turn takes a call step and an answer at least

    def scoring_cost(self, entry: Entry) -> int:
        return 2 * len(entry.question)  # each turn's calls run twice on simulated backends

    def solve(self, task: Task, run: RunContext) -> Generation:
        return solve_as_conversation(task, run)

    def score(self, entry: Entry, answer: Answer | None, result: Any, run: RunContext) -> Verdict:
        from pytest_bfcl.check.multi_turn import MultiTurnOptions, evaluate_multi_turn
        from pytest_bfcl.dataset.models import MultiTurnAnswer

        if not isinstance(answer, MultiTurnAnswer):
            raise ValueError(f"{entry.id}: multi-turn checking needs the ground truth")
        options = MultiTurnOptions(
            run.scoring.mode,
            strict=run.settings.strict_multi_turn,
            handler=run.scoring.handler,
        )
        long_context = run.wiring.long_context_for(entry)
        return evaluate_multi_turn(entry, answer, result, options, long_context)


MULTI_TURN = MultiTurnKind()
