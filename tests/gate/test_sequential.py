"""The sequential gate's stages and stopping rule (gate/sequential.py, run/sampling.py), and the
settings it refuses."""

from __future__ import annotations

import itertools

import pytest

from pytest_bfcl.gate.decision import Comparison, GateResult, compare
from pytest_bfcl.gate.sequential import (
    FUTILITY,
    STAGES,
    Ambiguous,
    SequentialRecord,
    StageCost,
    decide_interim,
    decide_stage,
    extension_line,
    interim_z,
    stop_reason,
)
from pytest_bfcl.run.sampling import nested_stages, stage_counts
from pytest_bfcl.settings import GateSettings, Settings

POPULATION = {
    "simple_python": [f"simple_python_{i}" for i in range(400)],
    "live_parallel": [f"live_parallel_{i}" for i in range(16)],
    "multiple": [f"multiple_{i}" for i in range(200)],
}


def test_stages_are_nested_seeded_and_end_with_the_whole_selection():
    stages = nested_stages(POPULATION, STAGES, seed=3)
    assert len(stages) == len(STAGES)
    assert [len(s["simple_python"]) for s in stages] == [40, 120, 400]
    assert [len(s["live_parallel"]) for s in stages] == [2, 5, 16]
    for earlier, later in itertools.pairwise(stages):
        for name in POPULATION:
            assert earlier[name] < later[name]
    assert stages[-1] == {name: set(ids) for name, ids in POPULATION.items()}
    assert stages == nested_stages(POPULATION, STAGES, seed=3)
    assert stages[0] != nested_stages(POPULATION, STAGES, seed=4)[0]


def test_stage_counts_never_shrink_and_keep_one_entry_of_a_small_category():
    counts = stage_counts({"a": 3, "b": 1000, "c": 0}, (0.01, 0.02, 1.0))
    assert counts[0] == {"a": 1, "b": 10, "c": 0}
    assert counts[1] == {"a": 1, "b": 20, "c": 0}
    assert counts[2] == {"a": 3, "b": 1000, "c": 0}


def _row(name, kind, p_value, failed=False):
    return Comparison(
        name=name, kind=kind, paired=10, baseline_accuracy=0.9, current_accuracy=0.9,
        regressions=[], improvements=[], p_value=p_value, failed=failed,
    )  # fmt: skip


def _gate(*rows):
    return GateResult(settings=GateSettings(), comparisons=list(rows))


def test_interim_z_reads_a_one_sided_p_value_as_a_normal_score():
    assert interim_z(0.5) == pytest.approx(0.0)
    assert interim_z(0.025) == pytest.approx(1.96, abs=0.01)
    assert interim_z(1.0) < -6 and interim_z(0.0) > 6
    assert interim_z(0.01) > interim_z(0.1) > interim_z(0.9)


def test_a_stage_stops_only_when_every_comparison_is_clearly_fine():
    fine = _gate(_row("simple_python", "category", 0.6), _row("overall", "overall", 0.5))
    assert decide_stage(fine, 1, 3).stop
    # all entries pooled: a drop spread thin is ambiguous even where no comparison shows it
    pooled = decide_stage(fine, 1, 3, pooled_p=0.01)
    assert not pooled.stop and pooled.ambiguous[0].name == "all entries"
    assert decide_stage(fine, 1, 3, pooled_p=0.5).stop
    # all entries pooled have the lowest bound: a mild drop asks for the next stage there
    assert FUTILITY["entries"][0] < interim_z(0.2) < FUTILITY["overall"][0]
    assert not decide_stage(fine, 1, 3, pooled_p=0.2).stop
    assert decide_stage(_gate(_row("overall", "overall", 0.2)), 1, 3).stop
    # an overall that looks bad does too
    mild = _gate(_row("simple_python", "category", 0.6), _row("overall", "overall", 0.05))
    assert interim_z(0.05) > FUTILITY["overall"][0]
    decision = decide_stage(mild, 1, 3)
    assert not decision.stop and [a.name for a in decision.ambiguous] == ["overall"]
    # a category whose p-value is small is ambiguous at its own (higher) bound
    category = _gate(_row("simple_python", "category", 0.001), _row("overall", "overall", 0.7))
    assert [a.name for a in decide_stage(category, 2, 3).ambiguous] == ["simple_python"]
    # a comparison that already fails is never clearly fine, whatever its p-value
    failing = _gate(_row("multiple", "category", 0.9, failed=True))
    assert decide_stage(failing, 1, 3).ambiguous[0].failing
    # the last stage always stops: the ordinary gate decides there
    assert decide_stage(category, 3, 3).stop and decide_stage(failing, 3, 3).ambiguous == []


def test_the_interim_decision_is_the_gate_on_the_entries_scored_so_far():
    baseline = {f"simple_python_{i}": True for i in range(400)}
    unchanged = {f"simple_python_{i}": True for i in range(40)}
    assert decide_interim(unchanged, baseline, GateSettings(), 1, 3).stop
    worse = dict(unchanged) | {f"simple_python_{i}": False for i in range(12)}
    decision = decide_interim(worse, baseline, GateSettings(), 1, 3)
    assert not decision.stop
    assert compare(worse, baseline, GateSettings()).comparisons[0].failed
    assert decision.ambiguous[0].failing and "failing so far" in decision.ambiguous[0].phrase()
    pooled = Ambiguous(name="all entries", kind="entries", p_value=1e-6, z=4.8, bound=0.5)
    assert pooled.phrase() == "all entries p=1e-06 worse so far"  # not "ambiguous"
    assert "ambiguous" in pooled.model_copy(update={"p_value": 0.2}).phrase()


def test_the_lines_say_why_the_run_extends_and_how_much_it_asked():
    low = {kind: (1.0, 1.0) for kind in FUTILITY}
    decision = decide_stage(_gate(_row("simple_python", "category", 0.08)), 1, 3, low)
    line = extension_line(decision, StageCost(entries=300, queries=410))
    assert line.startswith("bfcl: stage 2 of 3: simple_python p=0.08")
    assert line.endswith("asking 300 more entries (410 queries)")
    costs = [StageCost(entries=100, queries=300), StageCost(entries=1000, queries=3000)]
    record = SequentialRecord(
        stages=[0.1, 1.0], reached=1, costs=costs, full=costs[-1], reason=stop_reason(decision)
    )
    assert record.share == pytest.approx(0.1)
    assert record.summary().startswith(
        "stopped after stage 1 of 2: asked 100 of 1,000 entries, 300 of 3,000 queries (10%"
    )
    assert "ordinary gate decides" in stop_reason(decide_stage(_gate(), 3, 3))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({}, "needs --bfcl-baseline"),
        ({"baseline_path": "b.json", "sample": 0.1}, "drop --bfcl-sample"),
        ({"baseline_path": "b.json", "gate": GateSettings(mode="any")}, "--bfcl-gate=any"),
    ],
)
def test_settings_refuse_what_the_sequential_gate_cannot_run_with(extra, message):
    with pytest.raises(ValueError, match=message):
        Settings(model="oracle", sequential=True, **extra)
    Settings(model="oracle", sequential=True, baseline_path="b.json")
