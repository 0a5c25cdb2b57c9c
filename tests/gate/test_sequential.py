"""The sequential gate's stages, their seed, its stopping rule and early rejection
(gate/sequential.py, run/sampling.py, run/stage_seed.py), and the settings it refuses."""

from __future__ import annotations

import itertools
import random

import pytest

from pytest_bfcl.gate.decision import compare
from pytest_bfcl.gate.sequential import (
    SPENDING,
    STAGES,
    Ambiguous,
    SequentialRecord,
    StageCost,
    StageDecision,
    decide_stage,
    extension_line,
    hidden_chance,
    sequential_p,
    staged_gate,
    stop_reason,
    target_drop,
    upper_bound,
)
from pytest_bfcl.run.sampling import nested_stages, stage_counts
from pytest_bfcl.run.stage_seed import seed_of, stage_seed
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


def _run_stages(current, baseline, ids, seed, settings=None):
    """The plugin's loop on verdicts already drawn: the first stage of every category, then
    the next stage of the categories each decision names. Returns (decision, asked)."""
    settings = settings or GateSettings()
    stages = nested_stages(ids, STAGES, seed)
    sizes = {c: len(m) for c, m in ids.items()}
    asked = dict.fromkeys(ids, 1)
    for number in range(1, len(stages) + 1):
        decision = decide_stage(
            staged_gate(current, baseline, settings, stages, asked), number, sizes, settings
        )
        if decision.stop:
            return decision, asked
        for category in decision.extend:
            asked[category] = number + 1
    raise AssertionError("the last stage always stops")


def test_a_sequential_p_value_spends_a_share_of_alpha_at_each_stage():
    assert sum(SPENDING) == pytest.approx(1.0)
    w1, w2, w3 = SPENDING
    assert sequential_p({1: 0.1 * w1, 2: 0.5}) == pytest.approx(0.1)
    assert sequential_p({1: 0.5, 2: 0.02 * w2, 3: 0.03 * w3}) == pytest.approx(0.02)
    assert sequential_p({1: 0.5, 2: 0.5, 3: 0.007}) == pytest.approx(0.007 / w3)
    assert sequential_p({1: 0.9}) == 1.0 and sequential_p({}) == 1.0


def test_the_bound_is_wide_where_a_stage_holds_few_entries_of_a_category():
    # no drop seen on 10 of 100 entries: a 10-point drop is not ruled out; on 300 of 1000 it is
    few = upper_bound(0.0, [(1.0, 10, 100, 0.04)], 0.10)
    many = upper_bound(0.0, [(1.0, 300, 1000, 0.04)], 0.10)
    assert few > 0.10 > many
    # the whole selection asked: only the run's own noise is left
    assert upper_bound(0.02, [(1.0, 100, 100, 0.04)], 0.1) == pytest.approx(
        0.02 + 1.2816 * (0.04 / 100) ** 0.5, abs=1e-3
    )
    # a drop concentrated on a few entries hides from a small stage of a small category
    parts = [("simple_java", 1.0, 30, 0.0)]
    assert hidden_chance(parts, {"simple_java": 100}, 0.05) == pytest.approx(0.161, abs=0.002)
    assert hidden_chance(parts, {"simple_java": 100}, 0.2) < 0.001
    assert target_drop([(1.0, 100, 0.04)], GateSettings(), family=1) is not None
    assert target_drop([(1.0, 3, 0.04)], GateSettings(), family=30) is None


def test_a_regression_outside_a_stage_cannot_hide_from_stages_drawn_per_change():
    ids = {"simple_java": [f"simple_java_{i}" for i in range(100)]}
    baseline = dict.fromkeys(ids["simple_java"], True)
    stages = nested_stages(ids, STAGES, seed=0)
    outside = sorted(set(ids["simple_java"]) - stages[1]["simple_java"])[:12]
    current = baseline | dict.fromkeys(outside, False)
    assert compare(current, baseline, GateSettings()).failed  # what the full run says
    blocked = 0
    for seed in range(40):  # other changes draw other stages
        decision, _ = _run_stages(current, baseline, ids, seed)
        blocked += decision.failed
    assert blocked >= 38


def test_an_unchanged_category_stops_early_and_an_ambiguous_one_extends_alone():
    rng = random.Random(5)
    ids = {
        "simple_python": [f"simple_python_{i}" for i in range(400)],
        "live_multiple": [f"live_multiple_{i}" for i in range(1053)],
    }
    every = [i for m in ids.values() for i in m]
    chance = {i: 0.5 if rng.random() < 0.1 else float(rng.random() < 0.8) for i in every}
    baseline = {i: rng.random() < chance[i] for i in every}
    current = {i: rng.random() < chance[i] for i in every}
    decision, asked = _run_stages(current, baseline, ids, seed=1)
    assert not decision.failed and max(asked.values()) < 3, asked
    # 8 points of simple_python fail: simple_python goes on, the gate fails
    passing = [i for i in ids["simple_python"] if chance[i] == 1.0][:32]
    worse = current | dict.fromkeys(passing, False)
    decision, asked = _run_stages(worse, baseline, ids, seed=1)
    assert decision.failed


def test_early_rejection_stops_on_strong_evidence_and_keeps_holms_order():
    ids = {"simple_python": [f"simple_python_{i}" for i in range(400)]}
    baseline = dict.fromkeys(ids["simple_python"], True)
    current = dict.fromkeys(ids["simple_python"], False)  # everything broke
    decision, asked = _run_stages(current, baseline, ids, seed=2)
    assert decision.failed and not decision.last and asked == {"simple_python": 1}
    assert "early rejection" in stop_reason(decision)
    stages = nested_stages(ids, STAGES, 2)
    staged = staged_gate(current, baseline, GateSettings(), stages, asked)
    row = staged.gate.comparisons[0]
    assert row.failed and row.paired == 40
    # its p-value is the first stage's over that stage's share of alpha
    first = compare({i: current[i] for i in stages[0]["simple_python"]}, baseline, GateSettings())
    assert row.p_value == pytest.approx(min(1.0, first.comparisons[0].p_value / SPENDING[0]))


def test_the_lines_say_why_the_run_extends_and_how_much_it_asked():
    decision = StageDecision(
        stage=1,
        stages=3,
        stop=False,
        ambiguous=[
            Ambiguous(name="simple_java", kind="category", upper=12.5, target=8.1),
            Ambiguous(name="live_parallel", kind="category", upper=None, target=None),
        ],
        extend=["live_parallel", "simple_java"],
    )
    line = extension_line(decision, StageCost(entries=40, queries=40))
    assert line.startswith(
        "bfcl: stage 2 of 3: simple_java drop up to 12.5 points not ruled out (the full run "
        "detects 8.1), live_parallel too small to rule a drop out"
    )
    assert line.endswith("asking 40 more entries of 2 categories (40 queries)")
    record = SequentialRecord(
        stages=[0.1, 0.3, 1.0],
        spending=list(SPENDING),
        seed=77,
        seed_source="from GITHUB_SHA",
        reached=2,
        by_category={"simple_java": 2, "simple_python": 1},
        asked=StageCost(entries=100, queries=300),
        full=StageCost(entries=1000, queries=3000),
        reason=stop_reason(decision.model_copy(update={"stage": 2})),
    )
    assert record.share == pytest.approx(0.1)
    summary = record.summary()
    assert summary.startswith(
        "stopped after stage 2 of 3 (0 of 2 categories asked whole): asked 100 of 1,000 "
        "entries, 300 of 3,000 queries (10%"
    )
    assert "--bfcl-seed=77 reproduces them" in summary and "from GITHUB_SHA" in summary


def test_the_stages_seed_comes_from_the_commit_unless_fixed(tmp_path):
    assert stage_seed(5) == (5, "--bfcl-seed")
    seed, source = stage_seed(None, {"GITHUB_SHA": "abc123"}, tmp_path)
    assert source == "from GITHUB_SHA" and seed == seed_of("abc123")
    assert stage_seed(None, {"CI_COMMIT_SHA": "abc124"}, tmp_path)[0] != seed
    drawn = stage_seed(None, {}, tmp_path)  # no commit variable, no repository
    assert drawn[1] == "drawn for this run" and 0 <= drawn[0] < 2**48


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({}, "needs --bfcl-baseline"),
        ({"baseline_path": "b.json", "sample": 0.1}, "drop --bfcl-sample"),
        ({"baseline_path": "b.json", "gate": GateSettings(mode="any")}, "--bfcl-gate=any"),
        ({"baseline_path": "b.json", "min_scores": (("overall", 50.0),)}, "--bfcl-min-score"),
    ],
)
def test_settings_refuse_what_the_sequential_gate_cannot_run_with(extra, message):
    with pytest.raises(ValueError, match=message):
        Settings(model="oracle", sequential=True, **extra)
    Settings(model="oracle", sequential=True, baseline_path="b.json")
