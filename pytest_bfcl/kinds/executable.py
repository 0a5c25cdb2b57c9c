"""The first release's executable categories (outside V4's scores): answers run against real
functions and public APIs (``exec_*``, ``rest``) or checked as a SQL call's syntax (``sql``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_bfcl.dataset.categories import CATEGORIES, Category, Kind
from pytest_bfcl.kinds.base import KindSpec, RunContext

if TYPE_CHECKING:
    from pytest_bfcl.check.verdict import Verdict
    from pytest_bfcl.dataset.load import Dataset
    from pytest_bfcl.dataset.models import Answer, Entry


class ExecutableKind(KindSpec):
    kind = Kind.EXECUTABLE

    def load_entries(self, dataset: Dataset, category: Category) -> list[Entry]:
        # Imported here, like everything of these categories: they are opt-in.
        from pytest_bfcl.dataset import executable
        from pytest_bfcl.dataset.load import read_jsonl, validate

        return executable.load_entries(dataset.root, category, read_jsonl, validate)

    def load_answers(self, dataset: Dataset, category: Category) -> dict[str, Answer]:
        from pytest_bfcl.dataset import executable
        from pytest_bfcl.dataset.load import read_jsonl, validate

        entries = dataset.entries(category.name)
        return executable.load_answers(dataset.root, category, entries, read_jsonl, validate)  # type: ignore[return-value]

    def preflight(self, run: Any, categories: list[str]) -> None:
        """A replay needs the APIs' recording; a live run probes them once, and entries whose
        API does not answer are skipped with the reason."""
        from pytest_bfcl.kinds.exec_probe import preflight_executable

        run.unavailable.update(preflight_executable(run))

    def score(self, entry: Entry, answer: Answer | None, result: Any, run: RunContext) -> Verdict:
        """By the category's declared family: ``sql`` by the syntax tree of one
        ``sql.execute`` call, ``rest`` by the response of the model's request, ``exec`` by
        running the calls against the real functions."""
        # Their API client and HTTP stack only matter to these categories.
        from pytest_bfcl.check.executable import evaluate_exec
        from pytest_bfcl.check.rest import evaluate_rest
        from pytest_bfcl.check.single_turn import evaluate_ast
        from pytest_bfcl.dataset.executable import ExecAnswer
        from pytest_bfcl.dataset.models import AstAnswer

        variant = CATEGORIES[entry.category].variant
        if variant == "sql" and isinstance(answer, AstAnswer):
            return evaluate_ast(entry, answer, result, run.scoring)
        if not isinstance(answer, ExecAnswer):
            raise ValueError(f"{entry.id}: executable checking needs the ground truth")
        services = run.wiring.services()
        if variant == "rest":
            return evaluate_rest(entry, answer, result, run.scoring, services)
        return evaluate_exec(entry, answer, result, run.scoring, services)


EXECUTABLE = ExecutableKind()
