"""The pytest session of a run with ``--bfcl-model``: one collector per category, one item per
entry, and the session plugin that starts generation, gathers verdicts and ends the run.

Imported by :mod:`pytest_bfcl.plugin` only when a model is given, so that a pytest run without
one pays nothing for the engine and its dependencies.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.categories import CATEGORIES, Category, category_of_id
from pytest_bfcl.dataset.custom import add_custom_categories, unregister_custom_categories
from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.errors import InfrastructureError, RunStopped, SetupError
from pytest_bfcl.markers import marker_names, register_markers
from pytest_bfcl.models.base import Generation, ModelSpecError, Sampled
from pytest_bfcl.models.replay import ReplayError
from pytest_bfcl.perf import (
    allow_freezing,
    collect_and_freeze,
    forbid_freezing,
    freeze_long_lived,
    paused_gc,
    quick_interpreter_exit,
)
from pytest_bfcl.redact import redact_data, redact_text
from pytest_bfcl.report.baseline import (
    Baseline,
    BaselineError,
    incompatibilities,
    load_baseline,
    stamp_differences,
)
from pytest_bfcl.report.detection import category_noise
from pytest_bfcl.report.entries import (
    FunctionKeys,
    HtmlEntries,
    Outcome,
    bounded,
    parts_of,
    record_fields,
)
from pytest_bfcl.report.finish import (
    FailureNote,
    FinishedRun,
    RunOutcome,
    closing_sections,
    finish_run,
)
from pytest_bfcl.report.gate import GateResult
from pytest_bfcl.report.properties import ItemProperties
from pytest_bfcl.report.render import explain_failure
from pytest_bfcl.report.scores import ScoreBoard, Scores
from pytest_bfcl.report.usage import Prices, replica_summary, usage_summary
from pytest_bfcl.run.engine import BfclRun, Skip
from pytest_bfcl.run.preflight import preflight
from pytest_bfcl.settings import Settings, build_settings

NODE_PREFIX = "bfcl"
PLUGIN_NAME = "bfcl-session"
# The worker-input key that carries the controller's session name to xdist workers.
SESSION_INPUT = "bfcl_session"
UNAVAILABLE_INPUT = "bfcl_unavailable"
SERVER_INPUT = "bfcl_server"  # a server the controller started (vLLM), for workers to share
REPLICAS_OUTPUT = "bfcl_replicas"  # worker output: how each server replica fared there
EJECTED_INPUT = "bfcl_ejected"  # replicas the controller's checks took out of rotation
SESSION_KEY = pytest.StashKey[str]()


def start(config: pytest.Config, values: dict[str, Any]) -> None:
    """Build the run from the option values and register the session plugin; a set-up problem
    is a usage error, said once."""
    if _owns_process(config):
        allow_freezing()
    try:
        for categories in config.hook.pytest_bfcl_add_categories():
            added = add_custom_categories(list(categories or []))
            register_markers(config, (CATEGORIES[name] for name in added))
        settings = build_settings(values)
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None and workerinput.get(SERVER_INPUT):
            settings = settings.model_copy(update=json.loads(workerinput[SERVER_INPUT]))
        run = BfclRun.create(settings, config.hook, session=session_id(config))
        if workerinput is not None and workerinput.get(UNAVAILABLE_INPUT):
            run.unavailable.update(json.loads(workerinput[UNAVAILABLE_INPUT]))
        if workerinput is not None and workerinput.get(EJECTED_INPUT):
            run.model.take_out_of_rotation(json.loads(workerinput[EJECTED_INPUT]))
        baseline = _load_compatible_baseline(settings, run)
    except (ValueError, DatasetError, ModelSpecError, ReplayError, SetupError) as exc:
        raise pytest.UsageError(redact_text(f"pytest-bfcl: {exc}")) from None
    config.pluginmanager.register(BfclSessionPlugin(config, run, baseline), PLUGIN_NAME)
    quick_interpreter_exit()


def worker_input(config: pytest.Config) -> dict[str, str]:
    """What the controller hands each xdist worker: the session name, the entries the
    preflight found unavailable and the server replicas it took out of rotation (workers do
    not probe again), and the servers it started."""
    plugin = config.pluginmanager.get_plugin(PLUGIN_NAME)
    unavailable = plugin.run.unavailable if plugin is not None else {}
    shared = getattr(plugin.run.model, "shared_server", None) if plugin is not None else None
    server = shared() if shared is not None else {}
    ejected = plugin.run.model.out_of_rotation() if plugin is not None else {}
    return {
        SESSION_INPUT: session_id(config),
        UNAVAILABLE_INPUT: json.dumps(unavailable),
        SERVER_INPUT: json.dumps(server),
        EJECTED_INPUT: json.dumps(ejected),
    }


def session_id(config: pytest.Config) -> str:
    """The controller names the session; xdist workers get the name in their worker input
    (:func:`pytest_bfcl.plugin.pytest_configure_node`), so they share the memory snapshots
    made in it."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get(SESSION_INPUT):
        return str(workerinput[SESSION_INPUT])
    if SESSION_KEY not in config.stash:
        config.stash[SESSION_KEY] = uuid.uuid4().hex
    return config.stash[SESSION_KEY]


def _load_compatible_baseline(settings: Settings, run: BfclRun) -> Baseline | None:
    if settings.baseline_path is None:
        return None
    baseline = load_baseline(settings.baseline_path)
    metadata = run.metadata()
    stamps = stamp_differences(baseline, metadata)
    if stamps:  # verdicts under other rules or sampling compare with nothing, common or not
        raise BaselineError(
            f"baseline {settings.baseline_path} does not fit this run: " + "; ".join(stamps)
        )
    run.plan_noise = category_noise(baseline.rates)
    problems = incompatibilities(baseline, metadata)
    if problems and not settings.baseline_common:
        raise BaselineError(
            f"baseline {settings.baseline_path} does not fit this run: "
            + "; ".join(problems)
            + ". Record a new baseline, or pass --bfcl-baseline-common to compare the entries "
            "both runs have."
        )
    return baseline


# -- items --------------------------------------------------------------------------------------


class BfclFailure(Exception):
    """A scored entry that the model got wrong."""

    def __init__(self, verdict: Verdict, regression: bool = False) -> None:
        super().__init__(verdict.error_type)
        self.verdict = verdict
        self.regression = regression


class BfclCategory(pytest.Collector):
    """The items of one category (``bfcl/<category>``), one per entry."""

    def __init__(
        self, *, category: Category, run: BfclRun, baseline: Baseline | None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.category = category
        self.run = run
        self.baseline = baseline
        for name in marker_names(category):
            self.add_marker(name)

    def collect(self) -> list[pytest.Item]:
        try:
            entries = self.run.entries_for(self.category.name)
        except DatasetError as exc:
            raise pytest.UsageError(f"pytest-bfcl: {exc}") from exc
        with paused_gc():
            return self._items(entries)

    def _items(self, entries: list[Any]) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        for entry in entries:
            before = self.baseline.verdict(entry.id) if self.baseline else None
            item = BfclItem.from_parent(
                self,
                name=entry.id,
                nodeid=f"{self.nodeid}::{entry.id}",
                entry_id=entry.id,
                category=self.category,
                run=self.run,
                baseline_valid=before,
            )
            if before is False:
                # Failing in the baseline too: a known failure; passing now is an improvement.
                item.add_marker(pytest.mark.xfail(reason="known failure (fails in the baseline)"))
            items.append(item)
        return items


class BfclItem(pytest.Item):
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

    def setup(self) -> None:
        props = ItemProperties(
            self.entry_id,
            self.category.name,
            self.baseline_valid,
            known_error=self.run.known_error_note(self.entry_id),
        )
        self.user_properties += props.pairs("id", "category", "baseline_valid", "known_error")
        try:
            outcome = self.run.generation_for(self.entry_id)  # infrastructure failures: pytest E
        except RunStopped as exc:
            self.session.shouldstop = redact_text(f"pytest-bfcl: {exc}")  # one stop, not N errors
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

    def runtest(self) -> None:
        assert self._generation is not None
        verdict = self.run.score(self._generation)
        self._verdict = verdict
        self.config.hook.pytest_bfcl_result(
            verdict=verdict, generation=_reported_generation(self._generation, verdict)
        )
        known = self.run.expected_failure(self.entry_id)
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
                reason=redact_text(" ".join(reason.split())),
            )
            self.user_properties += failed.pairs()
            if known:
                pytest.xfail(f"known failure: {known}")
            raise BfclFailure(verdict, regression=self.baseline_valid is True)
        if known:
            pytest.fail(
                f"{self.entry_id} is listed as a known failure ({known}) but passes now; "
                "update data/oracle_known_failures.json",
                pytrace=False,
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, BfclFailure):
            text = explain_failure(excinfo.value.verdict)
            if excinfo.value.regression:
                text = "REGRESSION (passed in the baseline): " + text
            # a model's lone surrogates escaped (\\ud800): the report stays readable lines
            return redact_text(text).encode("utf-8", "backslashreplace").decode("utf-8")
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> Any:
        """Infrastructure trouble (a server, the network, a recording) is one readable line:
        its traceback says nothing about the model and floods the log when many entries see
        it."""
        if isinstance(excinfo.value, InfrastructureError):
            return redact_text(f"{type(excinfo.value).__name__}: {excinfo.value}")
        if isinstance(excinfo.value, pytest.xfail.Exception):
            # A known failure: pytest shows only its reason, but would first render the
            # traceback with the source of every frame (most of a clean oracle run's time).
            return str(excinfo.value)
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"bfcl {self.entry_id}"


def _reported_generation(generation: Generation | Sampled, verdict: Verdict) -> Generation:
    """The generation a verdict describes: with several samples, the first that failed (the
    one the verdict explains), or the first when all passed."""
    if isinstance(generation, Generation):
        return generation
    if verdict.valid or verdict.passes is None:
        return generation.generations[0]
    failed = _first_failed_sample(verdict)
    return generation.generations[failed] if failed is not None else generation.generations[0]


def _first_failed_sample(verdict: Verdict) -> int | None:
    """The sample number in a combined verdict's first reason ("... sample N failed: ...")."""
    first = verdict.errors[0] if verdict.errors else ""
    marker = "; sample "
    if not isinstance(first, str) or marker not in first:
        return None
    number = first.split(marker, 1)[1].split(" ", 1)[0]
    return int(number) - 1 if number.isdigit() else None


# -- the session plugin -------------------------------------------------------------------------


class BfclSessionPlugin:
    """Registered only when ``--bfcl-model`` is given."""

    def __init__(self, config: pytest.Config, run: BfclRun, baseline: Baseline | None) -> None:
        self.config = config
        self.run = run
        self.settings = run.settings
        self.baseline = baseline
        self.board = ScoreBoard()
        self.is_worker = hasattr(config, "workerinput")
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
        self.progress_pending = False
        self.html_entries = HtmlEntries()  # entry records for the HTML report
        self.functions: dict[str, Any] = {}  # their function docs, once per distinct set
        self.functions_sent: set[str] = set()  # keys this process already attached
        self.function_keys = FunctionKeys()
        self.worker_replicas: list[list[dict[str, Any]]] = []  # from each xdist worker
        self.queue_watch = XdistQueueWatch()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before anything is generated (and before xdist starts its workers): set-up problems
        end the session with one line, and the score board learns what the run must score."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.is_worker and reporter is not None:
            # A worker's summary is never shown, and pytest's FAILURES section costs time
            # quadratic in the failures: the controller prints the failures it is sent.
            _leave_bfcl_failures_out_of_sections(reporter)
        if self.is_worker or self.config.option.collectonly:
            return
        try:
            preflight(self.run)
        except SetupError as exc:
            raise pytest.UsageError(redact_text(f"pytest-bfcl: {exc}")) from None
        self.board.expect(self.run.expected_ids(), self.run.sampled_populations())
        if reporter is not None and self._summarise_failures():
            _leave_bfcl_failures_out_of_sections(reporter)
        if self.baseline is not None and not self.settings.baseline_common:
            # Baseline entries of categories this run did not select are missing, not ignored.
            selected = set(self.settings.categories)
            extra: dict[str, set[str]] = {}
            for entry_id in self.baseline.verdicts:
                if category_of_id(entry_id) not in selected:
                    extra.setdefault(category_of_id(entry_id), set()).add(entry_id)
            self.board.expect(extra)
        freeze_long_lived()  # an xdist controller collects no items: its data is all it keeps

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Every conftest is loaded now: does anything read the conversations' logs?
        observed = bool(self.config.hook.pytest_bfcl_result.get_hookimpls())
        self.run.keep_inference_logs = self.settings.html_path is not None or observed
        freeze_long_lived()

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        """Add one collector per selected category to the session's own collection, so that
        pytest counts, filters (-k, -m, --deselect, --lf) and reports BFCL items like others."""
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            report.result.extend(
                BfclCategory.from_parent(
                    collector,
                    name=name,
                    nodeid=f"{NODE_PREFIX}/{name}",
                    category=CATEGORIES[name],
                    run=self.run,
                    baseline=self.baseline,
                )
                for name in self.settings.categories
            )
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Any:
        """With ``--bfcl-html``: the entry's record rides on its report (xdist sends a report's
        attributes to the controller), on the report that decides its outcome."""
        report = yield
        if isinstance(item, BfclItem):
            if self.settings.html_path is not None:
                attach_record(item, report, self.functions_sent, self.function_keys)
            if report.when == "teardown":  # reported: the item no longer needs them
                item.release()
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> None:
        """Under xdist: start generating the items queued for this worker, so that requests
        stay in flight between items; the workers share ``--bfcl-concurrency``."""
        if not self.is_worker or not isinstance(item, BfclItem):
            return
        queued = self.queue_watch.new_items(self.config, item.session)
        ids = [i.entry_id for i in [item, *queued] if isinstance(i, BfclItem)]
        workers = int(self.config.workerinput.get("workercount", 1))  # type: ignore[attr-defined]
        self.run.prefetch(ids, concurrency=max(1, self.settings.concurrency // workers))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Start generation for every BFCL item before the first one runs."""
        if self.is_worker:
            return  # under xdist each worker prefetches what it is sent (above)
        option = self.config.option
        if option.collectonly or (session.testsfailed and not option.continue_on_collection_errors):
            return  # pytest runs nothing (collection errors stop it): ask the model nothing
        self.started = time.perf_counter()
        self.last_progress = self.started
        ids = [item.entry_id for item in session.items if isinstance(item, BfclItem)]
        self.total_items = len(ids)
        self.run.prefetch(ids)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.run.close()
        unregister_custom_categories()
        forbid_freezing()  # whatever runs next in this process is not this session

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
        if not interval or self.is_worker or self.total_items == 0:
            return
        if now - self.last_progress >= interval:
            self.progress_pending = True
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if not self.progress_pending or reporter is None or not _at_line_start(reporter):
            return
        self.last_progress = now
        self.progress_pending = False
        reporter.line(self.run.progress.line(self.total_items * self.settings.samples))

    @pytest.hookimpl(trylast=True)  # after the terminal has written the result
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return  # xdist sends the report on: the controller counts, lists and writes it
        if report.when == "teardown":
            self._report_progress()
        record = getattr(report, "bfcl_record", None)
        if record is not None:
            self.html_entries.add(record)
            self.functions.update(getattr(report, "bfcl_functions", None) or {})
            # Kept in the HTML entries now; pytest keeps every report to the end.
            del report.bfcl_record
            report.__dict__.pop("bfcl_functions", None)
        if not report.nodeid.startswith(f"{NODE_PREFIX}/"):
            self.other_failures += int(report.failed)
            return
        if report.when == "call" and report.failed:
            self._note_failure(report)
        if report.when != "teardown":
            return
        props = ItemProperties.from_pairs(report.user_properties)
        if props.category is None:
            return
        if props.valid is not None and props.id is not None:
            self.board.add_verdict(
                props.id, props.category, props.valid, props.passes, props.samples
            )
            self.board.add_measurements(
                props.latency, props.input_tokens, props.output_tokens, props.steps
            )
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
                regression=props.baseline_valid is True,
            )
        )
        if props.id in self.explanations:
            self.explanations[props.id] = str(report.longrepr)
        if not self.is_worker and self._summarise_failures():
            # junit has taken the full explanation (this hook runs last); what the terminal
            # still shows of the report is pytest's line per failure, which prints a text
            # explanation whole on CI (where pytest does not cut lines). One line it is.
            report.longrepr = str(report.longrepr).split("\n", 1)[0]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Runs after junitxml wrote its file and before the terminal summary."""
        if self.is_worker:
            # xdist hands a worker's output to the controller (pytest_testnodedown)
            workeroutput = self.config.workeroutput  # type: ignore[attr-defined]
            workeroutput[REPLICAS_OUTPUT] = json.dumps(self.run.model.replica_stats())
            collect_and_freeze()
            return
        self.run.finalize_results()
        self.usage = self._usage()
        self.finished = finish_run(self._outcome())
        self.scores, self.gate = self.finished.scores, self.finished.gate
        self.incomplete = self.finished.incomplete
        self._set_exit_status(session)
        collect_and_freeze()

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
            functions=self.functions,
            failures=self.failures,
            explanations=self.explanations,
            junit_path=Path(junit) if junit else None,
            step_summary=Path(step_summary) if step_summary else None,
            results_root=self.run.results.root if self.run.results is not None else None,
            gate_exclusions=listed_errors.gate_exclusions(
                set(self.board.verdicts), self.settings.known_errors
            ),
        )

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: absent without xdist
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """With xdist's default distribution, deal BFCL entries out whole at the start (see
        :class:`pytest_bfcl.xdist_schedule.SpreadScheduling`); any other ``--dist``, or a
        ``--maxschedchunk``, is the user's choice."""
        if getattr(config.option, "dist", None) != "load" or config.getoption("maxschedchunk"):
            return None  # another mode, or batches the user sized: xdist's own scheduling
        from pytest_bfcl.xdist_schedule import SpreadScheduling

        def weight(nodeid: str) -> int:
            return self.run.expected_requests(nodeid.rpartition("::")[2])

        return SpreadScheduling(config, log, prefix=f"{NODE_PREFIX}/", weight=weight)

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: absent without xdist
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: keep its replica figures for the usage report."""
        output = getattr(node, "workeroutput", None) or {}
        if output.get(REPLICAS_OUTPUT):
            self.worker_replicas.append(json.loads(output[REPLICAS_OUTPUT]))

    def _usage(self) -> dict[str, Any]:
        settings = self.settings
        wall = time.perf_counter() - self.started if self.started is not None else None
        prices = Prices(input=settings.price_input, output=settings.price_output)
        board = self.board
        summary = usage_summary(
            board.latencies, board.input_tokens, board.output_tokens, board.steps, wall, prices
        )
        replicas = replica_summary([self.run.model.replica_stats(), *self.worker_replicas])
        if replicas:
            summary["replicas"] = redact_data(replicas)
        return summary

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
        if not self.is_worker and not self.config.option.collectonly:
            self._closing_part(terminalreporter)
        return result

    def _closing_part(self, terminalreporter: Any) -> None:
        if not self.board.tallies or self.finished is None:
            terminalreporter.write_sep("=", "BFCL V4 scores")
            terminalreporter.write_line("no BFCL entry ran")
            return
        for title, lines in closing_sections(self._outcome(), self.finished):
            terminalreporter.write_sep("=", title)
            for line in lines:
                terminalreporter.write_line(line)


def _leave_bfcl_failures_out_of_sections(reporter: Any) -> None:
    """Have pytest's FAILURES section skip BFCL entries (they are listed a line each by the
    plugin). pytest also looks through every report for each failure it prints, so thousands
    of failures cost quadratic time there."""
    original = reporter.summary_failures

    def summary_failures() -> None:
        failed = reporter.stats.get("failed")
        if not failed:
            return original()
        reporter.stats["failed"] = [r for r in failed if not _is_bfcl(r)]
        try:
            return original()
        finally:
            reporter.stats["failed"] = failed

    reporter.summary_failures = summary_failures


def _owns_process(config: pytest.Config) -> bool:
    """Whether this session is the process's own: an xdist worker, or pytest started from its
    own command line (``pytest ...``, ``python -m pytest ...``), not a session inside another
    program (pytester's inline runs, a script calling ``pytest.main()`` in a loop)."""
    if hasattr(config, "workerinput"):
        return True
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if program is None or not (
        program.stem in ("pytest", "py.test")
        or (program.name == "__main__.py" and program.parent.name == "pytest")
    ):
        return False
    return tuple(config.invocation_params.args) == tuple(sys.argv[1:])


def _is_bfcl(report: Any) -> bool:
    return str(getattr(report, "nodeid", "")).startswith(f"{NODE_PREFIX}/")


def _at_line_start(reporter: Any) -> bool:
    """Whether pytest's output is at the start of a line (between rows of results)."""
    writer = getattr(reporter, "_tw", None)
    width = getattr(writer, "width_of_current_line", None)
    return width == 0 if isinstance(width, int) else reporter.currentfspath is None


def attach_record(
    item: BfclItem, report: pytest.TestReport, sent: set[str], keys: FunctionKeys
) -> None:
    """Put the entry's record on the report that settles its outcome (a failed or skipped
    setup, else the call), in the form the HTML report writes (:func:`html_parts`)."""
    outcome = _outcome(report)
    if outcome is None:
        return
    entry = item.run.entry(item.entry_id)
    # The docs as the data has them, read only (only serialised from here on): no copy.
    sources = entry.source_function
    if sources is None:
        sources = entry.function_sources()
    key = keys.key(sources)
    if key not in sent:
        sent.add(key)
        report.bfcl_functions = {key: sources}  # type: ignore[attr-defined]
    message = None
    if outcome in ("error", "skipped") and report.longrepr is not None:
        message = _longrepr_line(report)
    generation = item._generation
    if isinstance(generation, Sampled):
        generation = (
            _reported_generation(generation, item._verdict)
            if item._verdict is not None
            else generation.generations[0]
        )
    fields = record_fields(
        entry=entry,
        outcome=outcome,
        verdict=item._verdict,
        generation=generation,
        baseline_valid=item.baseline_valid,
        message=message,
        functions_key_=key,
        known_error=item.run.known_error_note(item.entry_id),
    )
    report.bfcl_record = parts_of(fields)  # type: ignore[attr-defined]


def _outcome(report: pytest.TestReport) -> Outcome | None:
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


class XdistQueueWatch:
    """What an xdist worker has queued, read from its worker loop, and only when the queue
    grew or was replaced since the last look: reading the whole queue before every item
    costs time quadratic in the items. Empty if the loop changes shape in another xdist
    version, in which case items generate one at a time."""

    def __init__(self) -> None:
        self._queue_id = 0
        self._length = 0

    def new_items(self, config: pytest.Config, session: pytest.Session) -> list[pytest.Item]:
        for plugin in config.pluginmanager.get_plugins():
            queue = getattr(plugin, "torun", None)
            if queue is None or not hasattr(queue, "lock"):
                continue
            try:
                return self._read(plugin, queue, session)
            except Exception:  # an internal of another plugin: never fatal
                return []
        return []

    def _read(self, plugin: Any, queue: Any, session: pytest.Session) -> list[pytest.Item]:
        with queue.lock() as pending:
            # Each item takes one index off the queue; a longer queue than that leaves, or
            # another queue object (work stealing replaces it), means new indices arrived.
            unchanged = id(pending) == self._queue_id and len(pending) <= self._length - 1
            self._queue_id, self._length = id(pending), len(pending)
            if unchanged:
                return []
            indices = [i for i in pending if isinstance(i, int)]
        nxt = getattr(plugin, "nextitem_index", None)
        if isinstance(nxt, int):
            indices.insert(0, nxt)
        return [session.items[i] for i in indices if 0 <= i < len(session.items)]
