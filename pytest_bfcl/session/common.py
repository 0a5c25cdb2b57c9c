"""What the session plugins of the controller and of an xdist worker share: building the
items into pytest's own collection, the entry's record on its report, the end of the run's
objects; and helpers for pytest's terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.dataset.categories import CATEGORIES
from pytest_bfcl.dataset.custom import unregister_custom_categories
from pytest_bfcl.gate import Baseline, BaselineAnswers
from pytest_bfcl.perf import FreezeAsItGrows, forbid_freezing, freeze_long_lived
from pytest_bfcl.report.html.records import DocsRefs
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.session.items import NODE_PREFIX, BfclCategory, BfclItem, attach_record, is_bfcl


class SessionPlugin:
    """Registered only when ``--bfcl-model`` is given: as :class:`ControllerPlugin` in a single
    process or an xdist controller, as :class:`WorkerPlugin` in an xdist worker."""

    def __init__(self, config: pytest.Config, run: BfclRun, baseline: Baseline | None) -> None:
        self.config = config
        self.run = run
        self.settings = run.settings
        self.baseline = baseline
        self.baseline_answers = BaselineAnswers.of(baseline)  # read when first needed
        worker = getattr(config, "workerinput", {}).get("workerid")
        self.docs_refs = DocsRefs(str(worker or "main"))  # function docs this process sent
        self.freezer = FreezeAsItGrows()

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
                    baseline_answers=self.baseline_answers,
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
                attach_record(item, report, self.docs_refs)
            if report.when == "call" and item.answer is not None:
                report.bfcl_answer = item.answer  # type: ignore[attr-defined]
            if report.when == "teardown":  # reported: the item no longer needs them
                item.release()
        return report

    def pytest_runtest_logfinish(self) -> None:
        self.freezer.entry_finished()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.run.close()
        unregister_custom_categories()
        forbid_freezing()  # whatever runs next in this process is not this session


def leave_bfcl_failures_out_of_sections(reporter: Any) -> None:
    """Have pytest's FAILURES section skip BFCL entries (they are listed a line each by the
    plugin). pytest also looks through every report for each failure it prints, so thousands
    of failures cost quadratic time there."""
    original = reporter.summary_failures

    def summary_failures() -> None:
        failed = reporter.stats.get("failed")
        if not failed:
            return original()
        reporter.stats["failed"] = [r for r in failed if not is_bfcl(r)]
        try:
            return original()
        finally:
            reporter.stats["failed"] = failed

    reporter.summary_failures = summary_failures


def owns_process(config: pytest.Config) -> bool:
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


def at_line_start(reporter: Any) -> bool:
    """Whether pytest's output is at the start of a line (between rows of results)."""
    writer = getattr(reporter, "_tw", None)
    width = getattr(writer, "width_of_current_line", None)
    return width == 0 if isinstance(width, int) else reporter.currentfspath is None
