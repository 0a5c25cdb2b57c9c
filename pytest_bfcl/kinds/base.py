"""What a kind of category declares about itself.

A kind (single-turn AST, relevance, irrelevance, multi-turn, memory, web search, format
sensitivity, executable) is one :class:`KindSpec`: how its entries and ground truth are read,
how an entry is solved and scored, what it costs and needs, and where its results go. The
engine, scheduler, preflight, data loading and reports ask the category's spec
(:func:`pytest_bfcl.kinds.kind_of`); a category's kind is declared with it
(``Category.kind``), never read from its name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pytest_bfcl.dataset.categories import Category, Kind

if TYPE_CHECKING:
    from pytest_bfcl.backends.base import BackendServices
    from pytest_bfcl.backends.long_context import LongContext
    from pytest_bfcl.check.verdict import Verdict
    from pytest_bfcl.dataset.load import Dataset
    from pytest_bfcl.dataset.models import Answer, Entry
    from pytest_bfcl.models.base import Generation, ModelBase, StepModel, Task
    from pytest_bfcl.scoring import ScoringOptions
    from pytest_bfcl.settings import Settings


class Solver(Protocol):
    """One entry's conversation, ready to run step by step against the model."""

    def run(self) -> Generation: ...


class ConversationWiring(Protocol):
    """What a kind asks of the run's conversation machinery (``run.wiring``): the simulated
    backends, long-context data, a memory question's starting snapshot, and a conversation.
    Declared here so the kinds depend on this shape, not on the run package above them."""

    def services(self) -> BackendServices: ...

    def long_context_for(self, entry: Entry) -> LongContext | None: ...

    def question_snapshot(self, entry: Entry) -> dict[str, Any] | None: ...

    def conversation(
        self, task: Task, model: StepModel, memory: dict[str, Any] | None = None
    ) -> Solver: ...


class RunContext(Protocol):
    """What a kind reads of the run that solves and scores its entries (``BfclRun``)."""

    settings: Settings
    scoring: ScoringOptions
    model: ModelBase
    dataset: Dataset

    @property  # read-only here, so the run's own wiring class satisfies it
    def wiring(self) -> ConversationWiring: ...

    @property
    def holds_conversations(self) -> bool: ...


class KindSpec:
    """The defaults fit a single-turn kind; each kind overrides what sets it apart."""

    kind: ClassVar[Kind]
    # Run here step by step as a conversation when the model answers step by step; otherwise
    # the model answers the entry whole (as replay does).
    conversation: ClassVar[bool] = False
    # Position of the kind's ids in a result file, in the reference's order: prerequisites (0),
    # web search, single-turn, multi-turn, memory questions.
    result_order: ClassVar[int] = 2
    # An extra pytest marker of the kind's items (``bfcl_<marker>``), beside category and group.
    marker: ClassVar[str | None] = None

    # -- data -------------------------------------------------------------------------------

    def load_entries(self, dataset: Dataset, category: Category) -> list[Entry]:
        """The category's scored entries, in file order."""
        return dataset.question_entries(category)

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        """Ground truth by entry id; none by default (the kind needs none)."""
        return {}

    # -- cost and needs ---------------------------------------------------------------------

    def requests(self, entry: Entry) -> int:
        """A rough count of the requests an entry needs (turns, for a conversation)."""
        return 1

    def scoring_cost(self, entry: Entry) -> int:
        """A rough weight of scoring a stored answer of the entry (1: one answer checked)."""
        return 1

    def start_rank(self, entry: Entry) -> int:
        """Among entries of equal cost, which start first (lower first)."""
        return 0

    def needed_packages(self, category: Category) -> tuple[tuple[str, ...], str]:
        """Packages the category needs when its conversations run here, and their extra."""
        return (), ""

    def preflight(self, run: Any, categories: list[str]) -> None:
        """A set-up check before generation, for the selected categories of this kind
        (``run``: the ``BfclRun``); raises ``SetupError`` or records unavailable entries."""

    def skip_reason(self, run: RunContext) -> str | None:
        """Why this kind's entries are left out of the run's scores, or ``None``."""
        return None

    # -- solving and scoring ----------------------------------------------------------------

    def solve(self, task: Task, run: RunContext) -> Generation:
        """The model's answer to one entry (one sample of it)."""
        return run.model.generate(task)

    def score(self, entry: Entry, answer: Answer | None, result: Any, run: RunContext) -> Verdict:
        raise NotImplementedError(f"{type(self).__name__} does not score entries")
