"""The agentic kinds: memory (questions on a store filled by prerequisite conversations) and
web search (questions answered with search and fetch tools). Both are conversations scored on
the final answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_bfcl.dataset.categories import Category, Kind
from pytest_bfcl.kinds.base import KindSpec, RunContext
from pytest_bfcl.kinds.multi_turn import solve_as_conversation

if TYPE_CHECKING:
    from pytest_bfcl.check.verdict import Verdict
    from pytest_bfcl.dataset.load import Dataset
    from pytest_bfcl.dataset.models import Answer, Entry
    from pytest_bfcl.models.base import Generation, Task

WEB_OFF_REASON = "web search is off in this run (--bfcl-web=off); not counted in the scores"
# The memory stores that need packages of an extra (the vector store's embedding model).
_STORE_PACKAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "vector": (("torch", "sentence_transformers", "faiss"), "memory"),
}


class AgenticKind(KindSpec):
    conversation = True

    def requests(self, entry: Entry) -> int:
        return 3

    def score(self, entry: Entry, answer: Answer | None, result: Any, run: RunContext) -> Verdict:
        from pytest_bfcl.check.agentic import evaluate_agentic
        from pytest_bfcl.dataset.models import AgenticAnswer

        agentic = answer if isinstance(answer, AgenticAnswer) else None
        return evaluate_agentic(entry, agentic, result, run.scoring.mode, run.scoring.handler)


class MemoryKind(AgenticKind):
    kind = Kind.MEMORY
    result_order = 4
    marker = "memory"

    def load_entries(self, dataset: Dataset, category: Category) -> list[Entry]:
        return dataset.memory_entries(category)

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        return dict(dataset.memory_answers(category))

    def start_rank(self, entry: Entry) -> int:
        """The k-th question of each scenario before any (k+1)-th: the first wave starts every
        scenario's prerequisites at once instead of queueing behind one scenario."""
        tail = entry.id.rsplit("-", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    def needed_packages(self, category: Category) -> tuple[tuple[str, ...], str]:
        return _STORE_PACKAGES.get(category.variant, ((), ""))

    def solve(self, task: Task, run: RunContext) -> Generation:
        """A question starts from its scenario's store as the prerequisites left it."""
        return solve_as_conversation(task, run, from_snapshot=True)


class WebSearchKind(AgenticKind):
    kind = Kind.WEB_SEARCH
    result_order = 1
    marker = "web_search"

    def load_entries(self, dataset: Dataset, category: Category) -> list[Entry]:
        return dataset.web_search_entries(category)

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        from pytest_bfcl.dataset.models import AgenticAnswer

        return dict(dataset.positional_answers(category, AgenticAnswer))

    def skip_reason(self, run: RunContext) -> str | None:
        if run.settings.web == "off" and run.holds_conversations:
            return WEB_OFF_REASON
        return None

    def solve(self, task: Task, run: RunContext) -> Generation:
        return solve_as_conversation(task, run)

    def preflight(self, run: Any, categories: list[str]) -> None:
        """Web search needs its packages, and network or a recording, before it starts."""
        if run.settings.web == "off" or not run.holds_conversations:
            return
        check = getattr(run.wiring.services().web, "preflight", None)
        if check is not None:
            check()


MEMORY = MemoryKind()
WEB_SEARCH = WebSearchKind()
