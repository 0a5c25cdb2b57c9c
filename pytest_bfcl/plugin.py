"""pytest glue: options, collection of one item per BFCL entry, and the score report.

Everything of substance lives in the engine (:mod:`pytest_bfcl.run.engine`); this module only
maps it onto pytest's life cycle. Without ``--bfcl-model`` the plugin adds nothing but its
options and markers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.categories import CATEGORIES, Category
from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.models.base import Generation
from pytest_bfcl.models.replay import ReplayError
from pytest_bfcl.report.json_report import build_report, write_json_atomic
from pytest_bfcl.report.render import explain_failure, score_table
from pytest_bfcl.report.scores import ScoreBoard
from pytest_bfcl.run.engine import BfclRun, ModelSpecError, Skip
from pytest_bfcl.settings import OPTIONS, build_settings

NODE_PREFIX = "bfcl"
PLUGIN_NAME = "bfcl-session"


# -- options and configuration ------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bfcl", "Berkeley Function-Calling Leaderboard (pytest-bfcl)")
    for flag, ini, help_text in OPTIONS:
        group.addoption(flag, dest=ini, default=None, help=help_text)
        parser.addini(ini, help=help_text, default=None)


def _value(config: pytest.Config, name: str) -> Any:
    cli = config.getoption(name, default=None)
    return cli if cli is not None else config.getini(name)


def marker_names(category: Category) -> list[str]:
    names = ["bfcl", f"bfcl_{category.name}", f"bfcl_{category.group}"]
    if category.kind.value in ("memory", "web_search"):
        names.append(f"bfcl_{category.kind.value}")
    return list(dict.fromkeys(names))


def pytest_configure(config: pytest.Config) -> None:
    seen: set[str] = set()
    for category in CATEGORIES.values():
        for name in marker_names(category):
            if name not in seen:
                seen.add(name)
                config.addinivalue_line(
                    "markers", f"{name}: pytest-bfcl entries ({name[5:] or 'all'})"
                )
    model = _value(config, "bfcl_model")
    if not model:
        return
    try:
        settings = build_settings(
            {
                "model": model,
                "mode": _value(config, "bfcl_mode"),
                "categories": _value(config, "bfcl_category"),
                "data_dir": _value(config, "bfcl_data"),
                "report_path": _value(config, "bfcl_report"),
            }
        )
        run = BfclRun.create(settings)
    except (ValueError, DatasetError, ModelSpecError, ReplayError) as exc:
        raise pytest.UsageError(f"pytest-bfcl: {exc}") from exc
    config.pluginmanager.register(BfclSessionPlugin(config, run), PLUGIN_NAME)


# -- items --------------------------------------------------------------------------------------


class BfclFailure(Exception):
    """A scored entry that the model got wrong."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.error_type)
        self.verdict = verdict


class BfclCategory(pytest.Collector):
    """The items of one category (``bfcl/<category>``), one per entry."""

    def __init__(self, *, category: Category, run: BfclRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.category = category
        self.run = run
        for name in marker_names(category):
            self.add_marker(name)

    def collect(self) -> list[pytest.Item]:
        try:
            entries = self.run.dataset.entries(self.category.name)
        except DatasetError as exc:
            raise pytest.UsageError(f"pytest-bfcl: {exc}") from exc
        return [
            BfclItem.from_parent(
                self,
                name=entry.id,
                nodeid=f"{self.nodeid}::{entry.id}",
                entry_id=entry.id,
                category=self.category,
                run=self.run,
            )
            for entry in entries
        ]


class BfclItem(pytest.Item):
    def __init__(self, *, entry_id: str, category: Category, run: BfclRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entry_id = entry_id
        self.category = category
        self.run = run
        self._generation: Generation | None = None

    def setup(self) -> None:
        self.user_properties += [("bfcl_id", self.entry_id), ("bfcl_category", self.category.name)]
        outcome = self.run.generate(self.entry_id)  # infrastructure failures raise: pytest E
        if isinstance(outcome, Skip):
            self.user_properties.append(("bfcl_skipped", outcome.reason))
            pytest.skip(outcome.reason)
        self._generation = outcome

    def runtest(self) -> None:
        assert self._generation is not None
        verdict = self.run.score(self._generation)
        self.user_properties.append(("bfcl_valid", "true" if verdict.valid else "false"))
        known = self.run.expected_failure(self.entry_id)
        if not verdict.valid:
            self.user_properties.append(("bfcl_error_type", str(verdict.error_type)))
            if known:
                pytest.xfail(f"known failure: {known}")
            raise BfclFailure(verdict)
        if known:
            pytest.fail(
                f"{self.entry_id} is listed as a known failure ({known}) but passes now; "
                "update data/oracle_known_failures.json",
                pytrace=False,
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, BfclFailure):
            return explain_failure(excinfo.value.verdict)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"bfcl {self.entry_id}"


# -- the session plugin -------------------------------------------------------------------------


class BfclSessionPlugin:
    """Registered only when ``--bfcl-model`` is given."""

    def __init__(self, config: pytest.Config, run: BfclRun) -> None:
        self.config = config
        self.run = run
        self.board = ScoreBoard()
        self.is_worker = hasattr(config, "workerinput")

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
                )
                for name in self.run.settings.categories
            )
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown" or not report.nodeid.startswith(f"{NODE_PREFIX}/"):
            return
        props = dict(report.user_properties)
        category = props.get("bfcl_category")
        if category is None:
            return
        if "bfcl_valid" in props:
            self.board.add_verdict(
                str(props["bfcl_id"]), str(category), props["bfcl_valid"] == "true"
            )
        elif "bfcl_skipped" in props:
            self.board.add_skip(str(category))
        else:
            self.board.add_error(str(category))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or self.config.option.collectonly:
            return
        terminalreporter.write_sep("=", "BFCL V4 scores")
        if not self.board.tallies:
            terminalreporter.write_line("no BFCL entry ran")
            return
        for line in score_table(self.board.scores(), self.run.metadata()):
            terminalreporter.write_line(line)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = self.run.settings.report_path
        if self.is_worker or path is None:
            return
        report = build_report(self.board.scores(), self.run.metadata())
        write_json_atomic(Path(path), report)
