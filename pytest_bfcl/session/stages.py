"""The run loop of a sequential run (``--bfcl-sequential``): the items of each stage run in
one pytest session, stage after stage, and after each stage the gate's interim evidence
decides whether the next one is asked (:mod:`pytest_bfcl.gate.sequential`). Entries of stages
the run did not need are deselected once, at the end: they are neither incomplete nor
testcases of the junit file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.gate import (
    STAGES,
    SequentialRecord,
    StageCost,
    StageDecision,
    decide_interim,
    detections,
    extension_line,
    sequential_plan,
    stop_reason,
)
from pytest_bfcl.session.items import BfclItem

if TYPE_CHECKING:
    from pytest_bfcl.session.controller import ControllerPlugin


def refuse_xdist(config: pytest.Config) -> None:
    """The stages decide on what the run has scored so far, which one process sees whole."""
    if config.pluginmanager.has_plugin("dsession"):
        raise pytest.UsageError(
            "pytest-bfcl: --bfcl-sequential runs its stages in one process; drop -n/--dist "
            "(the pull-request gate needs no workers)"
        )


def stage_expectations(
    expected: dict[str, set[str]], stages: list[dict[str, set[str]]]
) -> list[dict[str, set[str]]]:
    """What each stage adds to the entries the run must score (the run's expected entries,
    the sample of each stage), per category."""
    out: list[dict[str, set[str]]] = []
    seen: dict[str, set[str]] = {}
    for stage in stages:
        added = {}
        for category, ids in expected.items():
            new = ids & stage.get(category, set()) - seen.get(category, set())
            if new:
                added[category] = new
                seen.setdefault(category, set()).update(new)
        out.append(added)
    return out


class StagedLoop:
    """Runs a sequential session's items stage by stage (pytest's own loop, one stage at a
    time) and keeps what the reports say of it."""

    def __init__(self, plugin: ControllerPlugin, expected: dict[str, set[str]]) -> None:
        self.plugin = plugin
        self.run = plugin.run
        self.added = stage_expectations(expected, self.run.selection.stages())
        self.costs = self._costs()
        self.record: SequentialRecord | None = None

    def plan_lines(self) -> list[str]:
        """Before anything is asked: the stages, and what the last one detects (the drop each
        category's and the whole run's comparison finds with 80 % power, with the noise the
        baseline measured or the assumed one)."""
        sizes: dict[str, int] = {}
        for added in self.added:
            for category, ids in added.items():
                sizes[category] = sizes.get(category, 0) + len(ids)
        gate = self.plugin.settings.gate
        found = detections(sizes, self.run.selection.plan_noise, gate.alpha, gate.min_drop)
        return sequential_plan(STAGES, self.costs, found)

    def first_expectation(self) -> dict[str, set[str]]:
        return self.added[0] if self.added else {}

    def _costs(self) -> list[StageCost]:
        """Per stage, the entries and queries asked once it is done (cumulative)."""
        out, entries, queries = [], 0, 0
        for added in self.added:
            ids = [i for members in added.values() for i in members]
            entries += len(ids)
            queries += sum(self.run.expected_requests(i) for i in ids)
            out.append(StageCost(entries=entries, queries=queries))
        return out

    def run_items(self, session: pytest.Session) -> None:
        """Each stage's items through pytest's protocol, then the decision: stop, or say why
        the run goes on and ask the next stage."""
        by_stage = self._by_stage(list(getattr(session, "items", [])))
        count = len(by_stage)
        for number in range(1, count + 1):
            if number > 1:
                self.plugin.board.expect(self.added[number - 1])
            stage_items = by_stage[number - 1]
            later = [i for group in by_stage[number:] for i in group]
            self.plugin.total_items = sum(  # what the progress lines count toward
                1 for group in by_stage[:number] for i in group if isinstance(i, BfclItem)
            )
            self.run.prefetch([i.entry_id for i in stage_items if isinstance(i, BfclItem)])
            _run_protocol(session, stage_items, later[0] if later else None)
            decision = self._decide(number, count)
            if decision.stop:
                break
            self._say(extension_line(decision, self._added_cost(number + 1)))
        if later:  # the stages the run did not need: said once, not a testcase each
            session.config.hook.pytest_deselected(items=later)
        elif STAGES[-1] >= 1.0:  # the whole selection was asked: its scores are no sample's
            self.plugin.board.populations.clear()
        self.record = SequentialRecord(
            stages=list(STAGES),
            reached=number,
            costs=self.costs,
            full=self.costs[-1],
            reason=stop_reason(decision),
        )

    def _by_stage(self, items: list[pytest.Item]) -> list[list[pytest.Item]]:
        """The session's items by the stage that first holds them, in pytest's order (other
        tests of the session run with the first stage)."""
        by_stage: list[list[pytest.Item]] = [[] for _ in self.added]
        for item in items:
            stage = self.run.selection.stage_of(item.entry_id) if isinstance(item, BfclItem) else 1
            by_stage[stage - 1].append(item)
        return by_stage

    def _added_cost(self, stage: int) -> StageCost:
        before = self.costs[stage - 2]
        after = self.costs[stage - 1]
        return StageCost(
            entries=after.entries - before.entries, queries=after.queries - before.queries
        )

    def _decide(self, stage: int, stages: int) -> StageDecision:
        plugin = self.plugin
        board, settings = plugin.board, plugin.settings
        assert plugin.baseline is not None  # the settings refuse --bfcl-sequential without one
        exclude = listed_errors.gate_exclusions(set(board.verdicts), settings.known_errors)
        return decide_interim(
            board.verdict_rates(),
            plugin.baseline.pass_rates(),
            settings.gate,
            stage,
            stages,
            exclude=exclude,
        )

    def _say(self, line: str) -> None:
        reporter: Any = self.plugin.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.line(line)


def _run_protocol(session: pytest.Session, items: list[pytest.Item], after: Any) -> None:
    """pytest's own loop over these items: the last one's next item is the next stage's first,
    so fixtures live on across stages (pytest tears down what is left at the session's end)."""
    for index, item in enumerate(items):
        nextitem = items[index + 1] if index + 1 < len(items) else after
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
