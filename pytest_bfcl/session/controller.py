"""The session plugin of a single process or an xdist controller: preflight before anything
is generated, generation started for every item (single process), progress lines, the score
board fed from every report (its own or its workers'), and the end of the run (scores, gate,
reports, exit status, the closing part of the terminal)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.errors import SetupError
from pytest_bfcl.gate import Baseline, GateResult
from pytest_bfcl.models.base import ModelSpecError
from pytest_bfcl.perf import (
    collect_and_freeze,
    freeze_long_lived,
    pause_collector_for_reports,
    resume_collector,
)
from pytest_bfcl.printable import printable_lines
from pytest_bfcl.pytest_private import remember_failed
from pytest_bfcl.report.finish import (
    FailureNote,
    FinishedRun,
    RunOutcome,
    closing_sections,
    finish_run,
)
from pytest_bfcl.report.html.builder import HtmlBuilder, builder_wanted
from pytest_bfcl.report.html.entries import HtmlEntries
from pytest_bfcl.report.junit.cases import TextTestcases, install_text_testcases
from pytest_bfcl.report.junit.guard import JunitWriteGuard, refuse_unwritable_junit
from pytest_bfcl.report.pending import Settlement
from pytest_bfcl.report.properties import ItemProperties
from pytest_bfcl.report.usage import Prices, run_usage
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.run.pace import pace_key, record_run_pace, run_estimate
from pytest_bfcl.run.preflight import left_out_line, preflight, start_shared_servers
from pytest_bfcl.run.run_metadata import model_temperature
from pytest_bfcl.run.scheduler import ReportedProgress
from pytest_bfcl.scores.board import ScoreBoard, Scores
from pytest_bfcl.session.batching import receive_batched_events
from pytest_bfcl.session.common import (
    SessionPlugin,
    at_line_start,
    leave_bfcl_failures_out_of_sections,
    owns_process,
)
from pytest_bfcl.session.items import NODE_PREFIX, BfclItem, is_bfcl
from pytest_bfcl.session.messages import (
    identity_header,
    improvement_text,
    route_header,
    sample_detection,
    unknown_explain_ids,
)
from pytest_bfcl.session.settle import (
    pending_explanation,
    pending_report,
    recorded_report,
    settle_reports,
)
from pytest_bfcl.session.signals import winding_down
from pytest_bfcl.session.stages import StagedLoop, refuse_xdist
from pytest_bfcl.session.xdist_hooks import XdistControllerHooks


class ControllerPlugin(XdistControllerHooks, SessionPlugin):
    def __init__(self, config: pytest.Config, run: BfclRun, baseline: Baseline | None) -> None:
        super().__init__(config, run, baseline)
        self.board = ScoreBoard()
        self.other_failures = 0
        self.scores: Scores | None = None
        self.gate: GateResult | None = None
        self.usage: dict[str, Any] | None = None
        self.started: float | None = None
        self.last_progress = 0.0
        self.total_items = 0
        self.incomplete: list[str] = []
        self.finished: FinishedRun | None = None
        self.failures: list[FailureNote] = []
        self.explanations: dict[str, str] = dict.fromkeys(self.settings.explain, "")
        self.answers: dict[str, str] = {}  # entry id -> answer, where the run keeps it
        self.progress_pending = False
        # the HTML report's entries: rendered by a builder process, or here
        self.html_entries: HtmlEntries | HtmlBuilder = HtmlEntries()
        if self.settings.html_path is not None and owns_process(config) and builder_wanted():
            builder = HtmlBuilder.start()  # None: the session renders them
            if builder is not None:
                self.html_entries = builder
        # Entries worse than the baseline, pending the gate, by id (see report/pending.py).
        self.pending: dict[str, pytest.TestReport] = {}
        self.pending_explanations: dict[str, str] = {}
        self.narrowed: str | None = None  # the line that says the selection was narrowed
        self.collectable: set[str] = set()  # the entries collection yields, before any -k
        self.junit_cases: TextTestcases | None = None  # BFCL testcases of the junit file
        self.junit_refused: str | None = None  # why the junit file cannot be written
        self.worker_replicas: list[list[dict[str, Any]]] = []  # from each xdist worker
        # An xdist controller's progress: the entries its workers reported (set once they
        # have collected, which tells the controller how many there are).
        self.reported: ReportedProgress | None = None
        self.stages: StagedLoop | None = None  # --bfcl-sequential: the stages and their record
        self.sample_detects: list[str] = []  # a sampled gate: what it detects, said at the start
        # what the run asks and about how long, said at the start; the key of this model's pace
        self.estimate: str | None = None
        self.pace_key: str | None = None
        self.batched_events = False  # xdist: workers send a BFCL item's events as one message

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """Categories of the default selection this install cannot run, in one line; a
        sequential run's stages and what its last stage detects (before anything is asked)."""
        lines = [left_out_line(self.run.left_out)] if self.run.left_out else []
        lines += identity_header(self.run) + route_header(self.run) + self.run.settings_changes
        lines += [self.estimate] if self.estimate else []
        if self.stages is not None:
            return lines + self.stages.plan_lines()
        return lines + self.sample_detects

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before anything is generated (and before xdist starts its workers): set-up problems
        end the session with one line, and the score board learns what the run must score."""
        self.junit_refused = refuse_unwritable_junit(self.config)
        self.config.pluginmanager.register(JunitWriteGuard(self), "bfcl-junit-guard")
        self.junit_cases = install_text_testcases(self.config, f"{NODE_PREFIX}/")
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.config.option.collectonly:
            return
        if self.settings.sequential:
            refuse_xdist(self.config)
        try:
            preflight(self.run)
            if self.config.pluginmanager.has_plugin("dsession"):
                start_shared_servers(self.run.model)  # before xdist starts its workers
                self.batched_events = receive_batched_events(self.config)
                self.worker_collection = self.run.selection.collection()
        except (SetupError, ModelSpecError) as exc:
            raise pytest.UsageError(printable_lines(f"pytest-bfcl: {exc}")) from None
        expected = self.run.expected_ids()
        problem = unknown_explain_ids(self.settings.explain, expected, self.run)
        if problem:
            raise pytest.UsageError(f"pytest-bfcl: {problem}")
        if self.run.sampled and self.baseline is not None and not self.settings.sequential:
            self.sample_detects = [sample_detection(expected, self.run, self.settings)]
        if model_temperature(self.run) is not None:  # the oracle and replay ask nothing
            self.pace_key = pace_key(self.run.metadata(), self.settings.concurrency)
            self.estimate = run_estimate(self.run, expected, self.pace_key)
        if self.settings.sequential:  # the loop leaves out the stages it does not ask
            self.stages = StagedLoop(self, expected)
        self.board.expect(expected, self.run.sampled_populations())
        self.collectable = set().union(*expected.values())  # what collection yields
        self.board.clusters = self.run.clusters()
        if reporter is not None and self._summarise_failures():
            leave_bfcl_failures_out_of_sections(reporter)
        if self.baseline is not None and not self.settings.baseline_common:
            # Baseline entries of categories this run did not select are missing, not ignored.
            selected = set(self.settings.categories)
            extra: dict[str, set[str]] = {}
            for entry_id in self.baseline.verdicts:
                if category_of_id(entry_id) not in selected:
                    extra.setdefault(category_of_id(entry_id), set()).add(entry_id)
            self.board.expect(extra)
        freeze_long_lived()  # an xdist controller collects no items: its data is all it keeps

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        """Start generation for every BFCL item before the first one runs."""
        option = self.config.option
        if option.collectonly or (session.testsfailed and not option.continue_on_collection_errors):
            return None  # pytest runs nothing (collection errors stop it): ask the model nothing
        self.started = time.perf_counter()
        self.last_progress = self.started
        # An xdist controller collects nothing (on pytest 7 its session has no items at all).
        items = getattr(session, "items", [])
        if self.config.pluginmanager.has_plugin("dsession") and model_temperature(self.run) is None:
            # It reads reports as fast as the workers score stored answers and runs nothing
            # else (no server to watch): the collector's passes would find nothing to free.
            pause_collector_for_reports()
        if self.stages is not None:  # stage after stage, each asked only when needed
            self.stages.run_items(session)
            return True
        ids = [item.entry_id for item in items if isinstance(item, BfclItem)]
        self.total_items = len(ids)
        self.run.prefetch(ids)
        return None

    def _summarise_failures(self) -> bool:
        """pytest prints a section per failure unless asked otherwise; for a run of thousands
        of entries that is thousands of sections, so BFCL failures are listed a line each at
        the end instead, except with -v or an explicit --tb."""
        option = self.config.option
        return option.verbose <= 0 and getattr(option, "tbstyle", "auto") == "auto"

    def _report_progress(self) -> None:
        """A progress line every ``--bfcl-progress`` seconds, on a line of its own: it waits for
        pytest to finish its current row of results rather than breaking it."""
        interval = self.settings.progress_interval
        now = time.perf_counter()
        if not interval or self.total_items == 0:
            return
        if now - self.last_progress >= interval:
            self.progress_pending = True
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if not self.progress_pending or reporter is None or not at_line_start(reporter):
            return
        self.last_progress = now
        self.progress_pending = False
        if self.reported is not None:  # entries reported (each with all its samples)
            reporter.line(self.reported.line(self.total_items))
        else:  # this process's generation jobs: one per entry and sample
            reporter.line(self.run.progress.line(self.total_items * self.settings.samples))

    @pytest.hookimpl(trylast=True)  # after every deselection (-k, -m, --deselect, --lf)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.config.pluginmanager.has_plugin("dsession"):  # xdist: the hook above
            self._compare_on({i.entry_id for i in session.items if isinstance(i, BfclItem)})

    def _compare_on(self, selected: set[str]) -> None:
        """A selection narrowed on the command line is what the run must score: the rest is
        left out, not missing, and the closing part says so."""
        if self.config.option.collectonly:
            return
        narrowed = self.board.leave_out(self.collectable - selected)
        if narrowed is not None:
            kept, expected = narrowed
            self.narrowed = (
                f"narrowed on the command line (a node path, -k, -m, --deselect or --lf): "
                f"scored and compared on the {kept:,} entries selected of {expected:,}"
            )

    @pytest.hookimpl(trylast=True)  # after the terminal has written the result
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.reported is not None and is_bfcl(report):
            if report.when == "setup" and report.failed:
                self.reported.failed += 1  # an infrastructure error: no generation
            elif report.when == "teardown":
                self.reported.reported(failed=False)
        if report.when == "teardown":
            self._report_progress()
        record = getattr(report, "bfcl_record", None)
        if record is not None:
            self.html_entries.add_packed(record)
            del report.bfcl_record  # pytest keeps every report to the end
        answer = getattr(report, "bfcl_answer", None)
        if answer is not None:
            self.answers[report.nodeid.rpartition("::")[2]] = answer
            del report.bfcl_answer
        if not report.nodeid.startswith(f"{NODE_PREFIX}/"):
            self.other_failures += int(report.failed)
            return
        if report.when == "call" and (
            report.failed or pending_report(report) or recorded_report(report)
        ):
            self._note_failure(report)
        if report.when != "teardown":
            return
        props = ItemProperties.from_pairs(report.user_properties)
        if props.category is None:
            return
        if props.valid is not None and props.id is not None:
            if props.id in self.explanations and props.answer is not None:
                self.explanations[props.id] = improvement_text(props)
            self.board.add_verdict(
                props.id, props.category, props.valid, props.passes, props.samples
            )
            self.board.add_measurements(
                props.latency, props.input_tokens, props.output_tokens, props.steps
            )
            self.board.cached_steps += props.cached_steps or 0
            self.board.add_tool_failures(
                props.category, props.search_failures or 0, props.fetch_failures or 0
            )
        elif props.skipped is not None:
            self.board.add_skip(props.category, props.skipped, bool(props.excluded))
        else:
            self.board.add_error(props.category)

    def _note_failure(self, report: pytest.TestReport) -> None:
        props = ItemProperties.from_pairs(report.user_properties)
        if props.id is None or props.valid is not False:
            return  # not a scored failure (a known failure passing now, say)
        self.failures.append(
            FailureNote(
                id=props.id,
                category=props.category or "",
                error_type=props.error_type or "",
                reason=props.reason or "",
                # worse than the baseline: a regression or within the noise, once settled
                pending=pending_report(report) and props.baseline_valid is True,
            )
        )
        if pending_report(report):
            self.pending[props.id] = report  # settled by the gate at the end
            # its explanation, before the terminal's cut below: the settled junit text keeps it
            explanation = pending_explanation(report)
            if explanation:
                self.pending_explanations[props.id] = explanation
        if props.id in self.explanations:
            self.explanations[props.id] = str(report.longrepr)
        if self._summarise_failures():
            # junit has taken the full explanation (this hook runs last); what the terminal
            # still shows of the report is pytest's line per failure, which prints a text
            # explanation whole on CI (where pytest does not cut lines). One line it is.
            report.longrepr = str(report.longrepr).split("\n", 1)[0]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Runs after junitxml wrote its file and before the terminal summary."""
        winding_down()  # a SIGTERM now lets the reports be written
        resume_collector()  # the workers' reports are all in
        self.run.finalize_results()
        self.usage = self._usage()
        if self.pace_key is not None and not self.settings.no_cache:
            record_run_pace(self.settings.cache_dir, self.pace_key, self.usage)
        try:
            self.finished = finish_run(self._outcome())
        finally:
            if isinstance(self.html_entries, HtmlBuilder):
                self.html_entries.close()
        self.scores, self.gate = self.finished.scores, self.finished.gate
        self.incomplete = self.finished.incomplete
        self._settle_pending()
        self._set_exit_status(session)
        collect_and_freeze()

    def _settle_pending(self) -> None:
        """Entries worse than the baseline become failures where the gate failed on them, and
        say they are within the noise elsewhere, before pytest prints its summary."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        failed = settle_reports(
            self.pending, Settlement(self.gate), reporter, self._summarise_failures()
        )
        remember_failed(self.config, {self.pending[i].nodeid for i in failed})
        self.failures = [
            note.settled(note.id in failed) if note.pending else note for note in self.failures
        ]

    def _outcome(self) -> RunOutcome:
        junit = getattr(self.config.option, "xmlpath", None)
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")  # set by GitHub Actions
        return RunOutcome(
            board=self.board,
            settings=self.settings,
            metadata=self.run.metadata(),
            model_name=self.run.model.name,
            baseline=self.baseline,
            usage=self.usage,
            html_entries=self.html_entries,
            failures=self.failures,
            explanations=self.explanations,
            answers=self.answers,
            baseline_answers=self.baseline_answers,
            junit_path=Path(junit) if junit else None,
            junit_not_written=self.junit_refused
            or (self.junit_cases.not_written if self.junit_cases else None),
            step_summary=Path(step_summary) if step_summary else None,
            results_root=self.run.results.root if self.run.results is not None else None,
            gate_exclusions=listed_errors.gate_exclusions(
                set(self.board.verdicts), self.settings.known_errors
            ),
            left_out_extras=dict(self.run.left_out),
            left_out=left_out_line(self.run.left_out) if self.run.left_out else None,
            sequential=self.stages.record if self.stages is not None else None,
            sequential_gate=self.stages.gate if self.stages is not None else None,
            narrowed=self.narrowed,
            pending_explanations=self.pending_explanations,
        )

    def _usage(self) -> dict[str, Any]:
        settings = self.settings
        wall = time.perf_counter() - self.started if self.started is not None else None
        prices = Prices(input=settings.price_input, output=settings.price_output)
        replicas = [self.run.model.replica_stats(), *self.worker_replicas]
        return run_usage(self.board, replicas, wall, prices)

    def _set_exit_status(self, session: pytest.Session) -> None:
        """With a baseline or thresholds, the gate decides the exit status, unless something
        else went wrong (other tests failed, entries errored, the run was interrupted)."""
        if self.gate is None:
            return
        if session.exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return
        errors = sum(t.errors for t in self.board.tallies.values())
        if self.other_failures or errors:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        failed = self.gate.failed
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        """The run's closing part comes last, after pytest's own summaries (its line per
        failure included), so the end of a CI log is the scores, the gate and the files."""
        result = yield
        if not self.config.option.collectonly:
            self._closing_part(terminalreporter)
        return result

    def _closing_part(self, terminalreporter: Any) -> None:
        if not self.board.tallies or self.finished is None:
            terminalreporter.write_sep("=", "BFCL V4 scores")
            deselected = sum(1 for r in terminalreporter.stats.get("deselected", []) if is_bfcl(r))
            why = f": all {deselected} collected were deselected (-m, -k, --deselect)"
            terminalreporter.write_line("no BFCL entry ran" + (why if deselected else ""))
            gate = self.finished.gate if self.finished is not None else None
            if gate is not None and gate.failed:
                # the exit status is the gate's: say so here, not only in the JSON report
                terminalreporter.write_sep("=", "BFCL gate: FAILED")
                terminalreporter.write_line(
                    "incomplete: no entry of the selection was scored (pass "
                    "--bfcl-allow-incomplete to gate on what was scored)"
                )
            return
        for title, lines in closing_sections(self._outcome(), self.finished):
            terminalreporter.write_sep("=", title)
            for line in lines:
                terminalreporter.write_line(line)
