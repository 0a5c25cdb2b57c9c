"""BFCL entries as pytest items: one collector per category, one item per entry (fixtures,
markers and hooks apply as to test functions), and the HTML record an item's report carries."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.categories import Category
from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.errors import InfrastructureError, RunStopped
from pytest_bfcl.gate import Baseline, BaselineAnswers
from pytest_bfcl.markers import marker_names
from pytest_bfcl.models.base import Generation, Sampled
from pytest_bfcl.perf import paused_gc
from pytest_bfcl.printable import printable, printable_lines
from pytest_bfcl.pytest_private import ExpectedFailure, FixtureInfoCache, ItemWithFixtures
from pytest_bfcl.redact import redact_text
from pytest_bfcl.report.answers import answer_text, baseline_lines, failing_turn, flipped
from pytest_bfcl.report.html.facts import Outcome, bounded, record_facts
from pytest_bfcl.report.html.records import DocsRefs, encode_record
from pytest_bfcl.report.pending import RECORDED, pending_reason
from pytest_bfcl.report.properties import ItemProperties
from pytest_bfcl.report.render import explain_failure
from pytest_bfcl.run.engine import BfclRun, Skip
from pytest_bfcl.settings import Settings

NODE_PREFIX = "bfcl"


def is_bfcl(report: Any) -> bool:
    return str(getattr(report, "nodeid", "")).startswith(f"{NODE_PREFIX}/")


def readable_failure(text: str) -> str:
    """A failure's text as reported: secrets masked, a model's lone surrogates escaped
    (\\ud800), so the report stays readable lines."""
    return printable_lines(text, limit=None)


class BfclFailure(Exception):
    """A scored entry that the model got wrong."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.error_type)
        self.verdict = verdict


class PendingRegression(ExpectedFailure):
    """An entry that passed in the baseline and fails now (or fails in a run gated by
    thresholds alone): an expected failure until the gate settles it at the end of the run
    (:mod:`pytest_bfcl.report.pending`)."""

    def __init__(
        self, verdict: Verdict, thresholds: bool = False, answers: list[str] | None = None
    ) -> None:
        # the baseline's answer beside this run's follows the explanation (the text a
        # regression's junit failure keeps once the gate settles it)
        self.explanation = "\n".join([explain_failure(verdict), *(answers or [])])
        first = self.explanation.split("\n", 1)[0].removeprefix("BFCL ")
        super().__init__(pending_reason(first, thresholds), pytrace=False)


class BfclCategory(pytest.Collector):
    """The items of one category (``bfcl/<category>``), one per entry."""

    def __init__(
        self,
        *,
        category: Category,
        run: BfclRun,
        baseline: Baseline | None,
        baseline_answers: BaselineAnswers | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.category = category
        self.run = run
        self.baseline = baseline
        self.baseline_answers = (
            baseline_answers if baseline_answers is not None else BaselineAnswers.of(baseline)
        )
        for name in marker_names(category):
            self.add_marker(name)

    # A module's stand-in for fixtures (see BfclItem.getparent): request.module is None.
    obj = None

    @property
    def fixture_infos(self) -> FixtureInfoCache:
        """The fixtures its entries use, worked out once for the entries that add no
        ``usefixtures`` marker of their own (every entry of a category sits in one place)."""
        cache = self.__dict__.get("_fixture_infos")
        if cache is None:
            cache = self._fixture_infos = FixtureInfoCache()
        return cache

    def collect(self) -> list[pytest.Item]:
        try:
            ids = self.run.selection.collected_ids(self.category.name)
        except DatasetError as exc:
            raise pytest.UsageError(f"pytest-bfcl: {exc}") from exc
        with paused_gc():
            return self._items(ids)

    def _items(self, ids: list[str]) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        for entry_id in ids:
            before = self.baseline.verdict(entry_id) if self.baseline else None
            item = BfclItem.from_parent(
                self,
                name=entry_id,
                nodeid=f"{self.nodeid}::{entry_id}",
                entry_id=entry_id,
                category=self.category,
                run=self.run,
                baseline_valid=before,
                fixture_infos=self.fixture_infos,
            )
            if before is False:
                # Failing in the baseline too: a known failure; passing now is an improvement.
                item.add_marker(pytest.mark.xfail(reason="known failure (fails in the baseline)"))
            items.append(item)
        return items


class BfclItem(ItemWithFixtures):
    def __init__(
        self,
        *,
        entry_id: str,
        category: Category,
        run: BfclRun,
        baseline_valid: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.entry_id = entry_id
        self.category = category
        self.run = run
        self.baseline_valid = baseline_valid
        self._generation: Generation | Sampled | None = None
        self._verdict: Verdict | None = None
        # The answer as text, when the run keeps it (a baseline saved, a verdict that changed
        # from the baseline's): it rides on the call's report to the controller.
        self.answer: str | None = None

    # -- fixtures: BFCL items take autouse and usefixtures fixtures like test functions ---------

    def getparent(self, cls: Any) -> Any:
        """A category stands for a module: module-scoped fixtures live once per category (an
        entry has no module of its own, and pytest finds no node for that scope without one)."""
        found = super().getparent(cls)
        if found is None and cls is pytest.Module:
            return self.parent
        return found

    def warn(self, warning: Warning) -> None:
        """A warning about this entry (a fixture's, say): pytest's own needs a line number,
        which an entry has none of, so it is placed at the entry's id."""
        warnings.warn_explicit(
            warning, category=None, filename=f"{NODE_PREFIX}/{self.entry_id}", lineno=0
        )

    def _fill_fixtures(self) -> None:
        try:
            self.fill_fixtures()
        except pytest.skip.Exception as exc:  # a fixture skipped the entry: counted as skipped
            self.user_properties += ItemProperties(skipped=str(exc.msg or "skipped")).pairs()
            raise

    def setup(self) -> None:
        props = ItemProperties(
            self.entry_id,
            self.category.name,
            self.baseline_valid,
            known_error=self.run.known_error_note(self.entry_id),
        )
        self.user_properties += props.pairs("id", "category", "baseline_valid", "known_error")
        self._fill_fixtures()
        try:
            outcome = self.run.generation_for(self.entry_id)  # infrastructure failures: pytest E
        except RunStopped as exc:
            # one stop, not N errors
            self.session.shouldstop = printable(f"pytest-bfcl: {exc}", 2000)
            raise
        if isinstance(outcome, Skip):
            skip = ItemProperties(skipped=outcome.reason, excluded=outcome.excluded or None)
            self.user_properties += skip.pairs()
            pytest.skip(outcome.reason)
        tools = (outcome.details or {}).get("tool_failures") or {}
        measured = ItemProperties(
            latency=outcome.latency,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            steps=outcome.steps,
            cached_steps=cached_queries(outcome),
            search_failures=tools.get("search"),
            fetch_failures=tools.get("fetch"),
        )
        self.user_properties += measured.pairs()
        self._generation = outcome

    def release(self) -> None:
        """Drop the generation and verdict once the entry is reported: a run keeps its items
        to the end, and with them every conversation it generated."""
        self._generation = None
        self._verdict = None
        self.answer = None
        self.drop_fixture_values()

    def runtest(self) -> None:
        assert self._generation is not None
        verdict = self.run.score(self._generation)
        self._verdict = verdict
        self.config.hook.pytest_bfcl_result(
            verdict=verdict, generation=reported_generation(self._generation, verdict)
        )
        known = self.run.expected_failure(self.entry_id)
        changed = flipped(self.baseline_valid, verdict.valid)
        if changed or self.run.settings.save_baseline_path is not None:
            self.answer = answer_text(verdict, reported_generation(self._generation, verdict))
        if changed and verdict.valid:  # an improvement: both answers in the junit testcase
            self.user_properties += self._answer_properties()
        if verdict.samples is not None:
            self.user_properties += ItemProperties(
                passes=verdict.passes, samples=verdict.samples
            ).pairs()
        if verdict.valid:
            self.user_properties += ItemProperties(valid=True).pairs()
        else:
            reason = bounded(verdict.errors[0], 300) if verdict.errors else ""
            failed = ItemProperties(
                valid=False,
                error_type=str(verdict.error_type),
                reason=printable(" ".join(reason.split()), 300),
            )
            self.user_properties += failed.pairs()
            if known:
                pytest.xfail(f"known failure: {known}")
            if self.baseline_valid is True:
                raise PendingRegression(verdict, answers=self.answer_lines(failing_turn(verdict)))
            if gated_by_thresholds_alone(self.run.settings):
                raise PendingRegression(verdict, thresholds=True)
            if records_first_baseline(self.run.settings):
                pytest.xfail(f"{RECORDED}: {self.entry_id} {verdict.error_type}")
            raise BfclFailure(verdict)
        if known:
            pytest.fail(
                f"{self.entry_id} is listed as a known failure ({known}) but passes now; "
                "update data/oracle_known_failures.json",
                pytrace=False,
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, BfclFailure):
            return readable_failure(explain_failure(excinfo.value.verdict))
        return super().repr_failure(excinfo, style=style)

    @property
    def baseline_answers(self) -> BaselineAnswers:
        parent = self.parent
        if isinstance(parent, BfclCategory):
            return parent.baseline_answers
        return BaselineAnswers(None)

    def answer_lines(self, turn: int | None = None) -> list[str]:
        """The baseline's answer beside this run's (or why the baseline shows none); a
        conversation's at the turn that failed."""
        return baseline_lines(self.entry_id, self.baseline_answers, self.answer, turn)

    def answers_beside(self) -> tuple[str | None, str | None] | None:
        """(the baseline's answer, this run's) for an entry whose verdict changed."""
        verdict = self._verdict
        if verdict is None or not flipped(self.baseline_valid, verdict.valid):
            return None
        return self.baseline_answers.get(self.entry_id), self.answer

    def _answer_properties(self) -> list[tuple[str, Any]]:
        answers = self.baseline_answers
        before = answers.get(self.entry_id)
        shown = before if before is not None else f"(none: {answers.missing(self.entry_id)})"
        now = redact_text(self.answer) if self.answer is not None else None
        return ItemProperties(baseline_answer=shown, answer=now).pairs()

    def failure_text(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
        """Infrastructure trouble (a server, the network, a recording) is one readable line:
        its traceback says nothing about the model and floods the log when many entries see
        it."""
        if isinstance(excinfo.value, InfrastructureError):
            return printable_lines(f"{type(excinfo.value).__name__}: {excinfo.value}")
        if isinstance(excinfo.value, PendingRegression):  # the whole explanation
            return readable_failure(f"{excinfo.value.msg}\n{excinfo.value.explanation}")
        if isinstance(excinfo.value, pytest.xfail.Exception):
            # A known failure: pytest shows only its reason, but would first render the
            # traceback with the source of every frame (most of a clean oracle run's time).
            return str(excinfo.value)
        return None

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # A line number (0) although an entry has no source line: pytest requires one to
        # report a skip raised by a fixture at the item.
        return self.path, 0, f"bfcl {self.entry_id}"


def records_first_baseline(settings: Settings) -> bool:
    """A run that saves a baseline with nothing to compare (no baseline, no thresholds): its
    failures are what the baseline records, so they do not fail the run (docs/model-repo.md,
    "Your first baseline")."""
    return (
        settings.save_baseline_path is not None
        and settings.baseline_path is None
        and not settings.min_scores
    )


def gated_by_thresholds_alone(settings: Settings) -> bool:
    """A run whose gate is its thresholds (--bfcl-min-score) alone: a failing entry is pending
    until they are checked (a failing threshold fails the entries of its score)."""
    return settings.baseline_path is None and bool(settings.min_scores)


def reported_generation(generation: Generation | Sampled, verdict: Verdict) -> Generation:
    """The generation a verdict describes: with several samples, the first that failed (the
    one the verdict explains), or the first when all passed."""
    if isinstance(generation, Generation):
        return generation
    if verdict.valid or verdict.passes is None:
        return generation.generations[0]
    failed = first_failed_sample(verdict)
    return generation.generations[failed] if failed is not None else generation.generations[0]


def first_failed_sample(verdict: Verdict) -> int | None:
    """The sample number in a combined verdict's first reason ("... sample N failed: ...")."""
    first = verdict.errors[0] if verdict.errors else ""
    marker = "; sample "
    if not isinstance(first, str) or marker not in first:
        return None
    number = first.split(marker, 1)[1].split(" ", 1)[0]
    return int(number) - 1 if number.isdigit() else None


def cached_queries(outcome: Generation | Sampled) -> int | None:
    """The entry's queries answered from the response cache (a generation is cached when
    every query of it was)."""
    generations = outcome.generations if isinstance(outcome, Sampled) else (outcome,)
    return sum(g.steps or 1 for g in generations if g.cached) or None


def attach_record(item: BfclItem, report: pytest.TestReport, docs_refs: DocsRefs) -> None:
    """Put the entry's record on the report that settles its outcome (a failed or skipped
    setup, else the call), packed for the page's builder (:mod:`.html_records`)."""
    outcome = outcome_of(report)
    if outcome is None:
        return
    entry = item.run.entry(item.entry_id)
    # The docs as the data has them, read only (only packed from here on): no copy.
    sources = entry.source_function
    if sources is None:
        sources = entry.function_sources()
    message = None
    if outcome in ("error", "skipped") and report.longrepr is not None:
        message = _longrepr_line(report)
    generation = item._generation
    if isinstance(generation, Sampled):
        generation = (
            reported_generation(generation, item._verdict)
            if item._verdict is not None
            else generation.generations[0]
        )
    facts = record_facts(
        entry=entry,
        outcome=outcome,
        verdict=item._verdict,
        generation=generation,
        baseline_valid=item.baseline_valid,
        message=message,
        known_error=item.run.known_error_note(item.entry_id),
        answers=item.answers_beside(),
    )
    report.bfcl_record = encode_record(facts, *docs_refs.ref(sources))  # type: ignore[attr-defined]


def outcome_of(report: pytest.TestReport) -> Outcome | None:
    xfail = hasattr(report, "wasxfail")
    if report.when == "setup":
        if report.failed:
            return "error"
        if report.skipped and not xfail:
            return "skipped"
        return None
    if report.when != "call":
        return None
    if report.passed:
        return "xpassed" if xfail else "passed"
    if report.skipped:
        return "xfailed" if xfail else "skipped"
    return "failed"


def _longrepr_line(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (path, line, reason)
        return str(longrepr[-1])
    return str(longrepr).strip().splitlines()[-1] if str(longrepr).strip() else ""
