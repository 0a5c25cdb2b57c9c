"""The run loop of a sequential run (``--bfcl-sequential``): the items of each stage run in
one pytest session, stage after stage, and after each stage the gate's evidence decides which
categories are asked their next stage (:mod:`pytest_bfcl.gate.sequential`). The stages are
drawn over the session's items, so a selection narrowed on the command line (node ids, -k,
--lf, --deselect) is staged as it stands. Entries of stages the run did not need are
deselected once, at the end: they are neither incomplete nor testcases of the junit file."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.gate import (
    SPENDING,
    STAGES,
    GateResult,
    SequentialRecord,
    StageCost,
    StageDecision,
    StagedGate,
    decide_stage,
    detections,
    extension_line,
    sequential_plan,
    staged_gate,
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
    time): the first stage of every category, then the next stage of the categories whose
    comparisons could still hide a drop, until none can or the gate already fails; and keeps
    what the reports say of it."""

    def __init__(self, plugin: ControllerPlugin, expected: dict[str, set[str]]) -> None:
        self.plugin = plugin
        self.run = plugin.run
        self.planned = stage_expectations(expected, self.run.selection.stages())
        self.stages: list[dict[str, set[str]]] = []  # drawn over the session's items
        self.asked: dict[str, int] = {}  # per category, the stages asked
        self.sizes: dict[str, int] = {}  # per category, its entries in the session
        self.ran: set[str] = set()  # the entries whose items ran
        self.record: SequentialRecord | None = None
        self.decision: StageDecision | None = None

    def plan_lines(self) -> list[str]:
        """Before anything is asked: the stages and their seed, and what the whole selection
        detects (the drop each category's and the whole run's comparison finds with 80 %
        power, with the noise the baseline measured or the assumed one)."""
        sizes: dict[str, int] = {}
        for added in self.planned:
            for category, ids in added.items():
                sizes[category] = sizes.get(category, 0) + len(ids)
        gate = self.plugin.settings.gate
        found = detections(sizes, self.run.selection.plan_noise, gate.alpha, gate.min_drop)
        seed, source = self.run.selection.stage_seed
        cumulative = _cumulative(self.planned, self.run.expected_requests)
        return sequential_plan(
            STAGES, cumulative, found, f"stages drawn with seed {seed} ({source})"
        )

    def _costs(self, parts: list[dict[str, set[str]]]) -> StageCost:
        ids = [i for part in parts for members in part.values() for i in members]
        return StageCost(entries=len(ids), queries=sum(self.run.expected_requests(i) for i in ids))

    def run_items(self, session: pytest.Session) -> None:
        """The first stage of every category through pytest's protocol, then the decision:
        stop, or say why the run goes on and ask the next stage of the categories named."""
        items = list(getattr(session, "items", []))
        by_id = {i.entry_id: i for i in items if isinstance(i, BfclItem)}
        ids: dict[str, list[str]] = {}
        for entry_id in by_id:
            ids.setdefault(category_of_id(entry_id), []).append(entry_id)
        self.sizes = {c: len(members) for c, members in ids.items()}
        self.stages = self.run.selection.stages(ids) if ids else []
        count = len(self.stages)
        decision: StageDecision | None = None
        try:
            for number in range(1, count + 1):
                categories = list(ids) if decision is None else decision.extend
                stage_ids = self._stage_ids(number, categories)
                for category in categories:
                    self.asked[category] = number
                chosen: list[pytest.Item] = [
                    i for i in items if isinstance(i, BfclItem) and i.entry_id in stage_ids
                ]
                if number == 1:
                    chosen = [i for i in items if not isinstance(i, BfclItem) or i in chosen]
                self.plugin.total_items = len(self.ran) + len(stage_ids)
                self.run.prefetch([i.entry_id for i in chosen if isinstance(i, BfclItem)])
                rest = [i for i in by_id.values() if i.entry_id not in self.ran | stage_ids]
                _run_protocol(session, chosen, rest[0] if rest else None)
                self.ran |= stage_ids
                decision = self._decide(number)
                self.decision = decision
                if decision.stop:
                    break
                self._say(
                    extension_line(
                        decision, self._costs([self._added(number + 1, decision.extend)])
                    )
                )
        finally:
            self._finish(session, by_id)

    def _stage_ids(self, number: int, categories: list[str]) -> set[str]:
        """The entries stage ``number`` adds to these categories."""
        return set().union(*(self._added(number, categories).values())) if categories else set()

    def _added(self, number: int, categories: list[str]) -> dict[str, set[str]]:
        stage = self.stages[number - 1]
        before = self.stages[number - 2] if number > 1 else {}
        return {c: stage.get(c, set()) - before.get(c, set()) for c in categories}

    def _finish(self, session: pytest.Session, by_id: dict[str, BfclItem]) -> None:
        """Entries of the stages not asked are deselected once (neither missing nor testcases);
        a category asked whole is scored as such, not as a sample; the record for the reports."""
        count = len(self.stages)
        asked_ids = {
            i for c, reached in self.asked.items() for i in self.stages[reached - 1].get(c, ())
        }
        unasked = [item for entry_id, item in by_id.items() if entry_id not in asked_ids]
        if unasked:
            session.config.hook.pytest_deselected(items=unasked)
            self.plugin.board.leave_out({item.entry_id for item in unasked})
        for category, reached in self.asked.items():
            if reached >= count:
                self.plugin.board.populations.pop(category, None)
        decision = self.decision
        ran = [i for i in by_id if i in self.ran]
        self.record = SequentialRecord(
            stages=list(STAGES),
            spending=list(SPENDING),
            seed=self.run.selection.stage_seed[0],
            seed_source=self.run.selection.stage_seed[1],
            reached=max(self.asked.values(), default=0),
            by_category=dict(sorted(self.asked.items())),
            asked=self._costs([{"": set(ran)}]),
            full=self._costs([{"": set(by_id)}]),
            failed_early=bool(decision and decision.failed and not decision.last),
            reason=stop_reason(decision) if decision is not None else "interrupted",
        )

    def gate(self) -> GateResult | None:
        """The sequential gate on what the run scored: each comparison's sequential p-value
        over the stages it completed, Holm's procedure over them."""
        plugin = self.plugin
        if plugin.baseline is None or not self.stages:
            return None
        return self._staged().gate

    def _staged(self) -> StagedGate:
        plugin = self.plugin
        board, settings = plugin.board, plugin.settings
        assert plugin.baseline is not None  # the settings refuse --bfcl-sequential without one
        exclude = listed_errors.gate_exclusions(set(board.verdicts), settings.known_errors)
        return staged_gate(
            board.verdict_rates(),
            plugin.baseline.pass_rates(),
            settings.gate,
            self.stages,
            self.asked,
            exclude=exclude,
        )

    def _decide(self, stage: int) -> StageDecision:
        settings = self.plugin.settings
        return decide_stage(
            self._staged(), stage, self.sizes, settings.gate, samples=settings.samples
        )

    def _say(self, line: str) -> None:
        reporter: Any = self.plugin.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.line(line)


def _cumulative(
    added: list[dict[str, set[str]]], requests: Callable[[str], int]
) -> list[StageCost]:
    """Per stage, the entries and queries asked once it is done if every category goes on."""
    out, entries, queries = [], 0, 0
    for part in added:
        ids = [i for members in part.values() for i in members]
        entries += len(ids)
        queries += sum(requests(i) for i in ids)
        out.append(StageCost(entries=entries, queries=queries))
    return out


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
