"""The gate's false-alarm rate and power, by simulation over the benchmark's real category
structure (every single-turn, multi-turn and agentic scoring category at its real size, the
gated groups and the overall score: 30 comparisons on a full run).

A simulated model has fixed entries (passing with probability 0.75, then always passing or
always failing) and flaky ones (a share of the entries, each passing a sample with its own
probability, by default between 0.2 and 0.8; ``--weak``: half the entries, 0.03-0.25). A
baseline run and a current run of the *same* model are drawn independently (the baseline may
have more samples per entry than the current run: a merged baseline): any gate failure
between them is a false alarm. A regression makes a number of fixed-passing entries of one
category (or of every category) always fail.

For each watched comparison it prints the drop the gate states it detects with 80 % power,
how often that comparison itself failed (the figure to set beside the 80 %), and how often
the whole gate failed (any comparison: what a pull request experiences).

    python benchmarks/gate_power.py                 # docs/gate-statistics.md's first rows
    python benchmarks/gate_power.py --reps 400 --samples 3 --flaky 0.1
    python benchmarks/gate_power.py --weak --baseline-samples 5   # merged baseline, weak model
    python benchmarks/gate_power.py --sequential --reps 400    # the sequential gate's figures

``--sequential`` simulates the pull-request gate of ``--bfcl-sequential`` on the single-turn and
multi-turn categories (their real sizes): nested stages drawn per pair of runs, the gate's own
stopping rule (:mod:`pytest_bfcl.gate.sequential`), and the queries asked counted with each
kind's requests per entry (a multi-turn entry asks 7-9 times). It prints how often an unchanged
model fails, how often a regression of ``--points`` points in every category (always-passing
entries that now fail) is blocked, and the share of the full selection's queries asked.

``benchmarks/test_gate_power.py`` checks the promises on a smaller number of repetitions.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pytest_bfcl.dataset.categories import ALL_SCORING, DATASET_SIZES, MULTI_TURN, SINGLE_TURN
from pytest_bfcl.dataset.groups import BY_NAME, OVERALL_WEIGHTS
from pytest_bfcl.gate import decision
from pytest_bfcl.gate.decision import GateResult, GateSettings, compare
from pytest_bfcl.gate.sequential import STAGES, decide_stage, staged_gate
from pytest_bfcl.gate.stats import mcnemar_exact
from pytest_bfcl.run.sampling import allocate, nested_stages
from pytest_bfcl.scores.aggregate import aggregate_groups
from pytest_bfcl.scores.models import CategoryScore

Rates = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class Model:
    """Each entry's pass probability (1.0 / 0.0 for fixed entries)."""

    chances: dict[str, float]

    @classmethod
    def draw(
        cls,
        sizes: dict[str, int],
        flaky: float,
        seed: int,
        chance: tuple[float, float] = (0.2, 0.8),
    ) -> Model:
        rng = random.Random(f"model:{seed}")
        chances = {}
        for name, size in sizes.items():
            for i in range(size):
                if rng.random() < flaky:
                    chances[f"{name}_{i}"] = rng.uniform(*chance)
                else:
                    chances[f"{name}_{i}"] = 1.0 if rng.random() < 0.75 else 0.0
        return cls(chances)

    def regressed(self, watch: str, points: float, seed: int) -> Model:
        """The same model with ``points`` of the entries of each category in the watched score
        (a category, a group or the overall), among those that always passed, now always
        failing."""
        rng = random.Random(f"regression:{seed}")
        chances = dict(self.chances)
        for name in sorted(_members(self, watch)):
            ids = [k for k in chances if k.rsplit("_", 1)[0] == name]
            passing = [k for k in ids if chances[k] == 1.0]
            count = min(len(passing), round(points / 100 * len(ids)))
            for entry_id in rng.sample(passing, count):
                chances[entry_id] = 0.0
        return Model(chances)

    def run(self, samples: int, rng: random.Random) -> Rates:
        return {
            i: (sum(rng.random() < p for _ in range(samples)), samples)
            for i, p in self.chances.items()
        }


def applied_drop(model: Model, regressed: Model, watch: str) -> float:
    """The drop in points a regression made in the watched score: its category's mean, or the
    leaderboard-weighted group or overall score (as the gate's table prints it)."""
    before, after = _scores(model), _scores(regressed)
    return 100 * (before[watch] - after[watch])


def _scores(model: Model) -> dict[str, float]:
    """Expected category, group and overall scores of a model (its pass chances)."""
    by_category: dict[str, list[float]] = {}
    for entry_id, chance in model.chances.items():
        by_category.setdefault(entry_id.rsplit("_", 1)[0], []).append(chance)
    cats = {
        name: CategoryScore(
            accuracy=sum(c) / len(c), correct=0, total=len(c), dataset_size=len(c), complete=True
        )
        for name, c in by_category.items()
    }
    groups = aggregate_groups(cats, sized_by_run=True)
    out = {name: score.accuracy or 0.0 for name, score in groups.items()}
    return out | {name: score.accuracy or 0.0 for name, score in cats.items()}


def category_sizes(fraction: float | None = None) -> dict[str, int]:
    """The scoring categories' sizes (a stratified sample's with ``fraction``)."""
    sizes = {name: DATASET_SIZES[name] for name in ALL_SCORING}
    return allocate(sizes, fraction) if fraction is not None else sizes


def uncorrected_failure(gate: GateResult, alpha: float, min_drop: float) -> bool:
    """The gate before this change: two-sided McNemar at alpha on every comparison alone."""
    for c in gate.comparisons:
        worse = len(c.regressions) + len(c.flaky_before)
        p = mcnemar_exact(worse, len(c.improvements))
        if c.drop_points >= min_drop and p < alpha:
            return True
    return False


@dataclass
class Outcome:
    runs: int = 0
    failed: int = 0
    failed_uncorrected: int = 0
    watched_failed: int = 0  # the watched comparison itself failed
    comparisons: int = 0  # in the last run's gate

    @property
    def rate(self) -> float:
        return self.failed / self.runs if self.runs else 0.0


def simulate(
    model: Model,
    current: Model,
    samples: int | tuple[int, int],
    reps: int,
    seed: int,
    settings: GateSettings,
    watch: str | None = None,
) -> tuple[Outcome, list[float | None]]:
    """Gate failures over ``reps`` pairs of runs, and the detectable drop the gate stated for
    the ``watch`` comparison in each. ``samples``: per entry, for both runs or as (baseline,
    current)."""
    before, now = (samples, samples) if isinstance(samples, int) else samples
    rng = random.Random(f"runs:{seed}")
    outcome, stated = Outcome(), []
    for _ in range(reps):
        gate = compare(current.run(now, rng), model.run(before, rng), settings)
        outcome.runs += 1
        outcome.comparisons = len(gate.comparisons)
        outcome.failed += any(c.failed for c in gate.comparisons)
        outcome.failed_uncorrected += uncorrected_failure(gate, settings.alpha, settings.min_drop)
        if watch is not None:
            found = [c for c in gate.comparisons if c.name == watch]
            stated.append(found[0].detectable_drop if found else None)
            outcome.watched_failed += bool(found and found[0].failed)
    return outcome, stated


WATCHED = ("overall", "non_live", "multi_turn", "live_parallel", "simple_python", "multi_turn_base")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--samples", type=int, default=1, help="per entry, current run")
    parser.add_argument("--baseline-samples", type=int, default=None, help="default: --samples")
    parser.add_argument("--flaky", type=float, default=0.1)
    parser.add_argument("--weak", action="store_true", help="half the entries pass 3-25 %%")
    parser.add_argument("--fraction", type=float, default=None, help="a --bfcl-sample fraction")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-drops", action="store_true", help="false alarms only")
    parser.add_argument("--sequential", action="store_true", help="the sequential gate")
    parser.add_argument(
        "--only",
        default=None,
        help="--sequential: rows whose label has one of these (comma-separated)",
    )
    args = parser.parse_args(argv)
    if args.sequential:
        sequential_main(args.reps, args.flaky, args.seed, args.only)
        return
    settings = GateSettings()
    sizes = category_sizes(args.fraction)
    flaky, chance = (0.5, (0.03, 0.25)) if args.weak else (args.flaky, (0.2, 0.8))
    model = Model.draw(sizes, flaky, args.seed, chance)
    sides = (args.baseline_samples or args.samples, args.samples)
    size = f"{sum(sizes.values())} entries" + (
        f" ({args.fraction:g} sample)" if args.fraction else ""
    )
    print(
        f"{size}, {flaky:.0%} flaky (pass chance {chance[0]:g}-{chance[1]:g}), "
        f"samples baseline {sides[0]} / current {sides[1]}, {args.reps} pairs of runs"
    )
    unchanged, _ = simulate(model, model, sides, args.reps, args.seed, settings)
    print(
        f"unchanged model: gate failed {unchanged.failed}/{unchanged.runs} "
        f"({unchanged.rate:.1%}) over {unchanged.comparisons} comparisons; uncorrected McNemar "
        f"per comparison: {unchanged.failed_uncorrected}/{unchanged.runs}"
    )
    if args.no_drops:
        return
    for watch in WATCHED:
        _, drops = simulate(model, model, sides, 20, args.seed + 7, settings, watch)
        known = [d for d in drops if d is not None]
        if not known:
            print(f"{watch}: the gate states it cannot detect any drop at this size")
            continue
        drop = sorted(known)[len(known) // 2]
        regressed = model.regressed(watch, drop, args.seed)
        caught, _ = simulate(model, regressed, sides, args.reps // 2, args.seed + 3, settings,
                             watch)  # fmt: skip
        print(
            f"{watch}: stated detectable drop {drop:.2f} points; a drop of "
            f"{applied_drop(model, regressed, watch):.2f} failed {watch} in "
            f"{caught.watched_failed}/{caught.runs} runs, the gate in {caught.failed}/{caught.runs}"
        )


# The kinds' requests per entry, averaged over the pinned release's entries (the scheduler's
# expected_requests: 2 per turn of a multi-turn conversation, 1 for a single-turn entry).
QUERIES_PER_ENTRY = {
    "multi_turn_base": 7.34,
    "multi_turn_miss_func": 9.34,
    "multi_turn_miss_param": 9.34,
    "multi_turn_long_context": 7.34,
}
# The pull-request gate's selection in the sequential figures.
PULL_REQUEST_SELECTION = (*SINGLE_TURN, *MULTI_TURN)


def queries(ids: Iterable[str]) -> float:
    return sum(QUERIES_PER_ENTRY.get(i.rsplit("_", 1)[0], 1.0) for i in ids)


@dataclass
class SequentialOutcome:
    """A placement's pairs of runs: how often the sequential gate and the full run blocked,
    the share of the full selection's queries the sequential gate asked, where it stopped."""

    runs: int = 0
    failed: int = 0
    full_failed: int = 0  # the ordinary gate on the whole selection, same pairs
    share: float = 0.0  # summed share of the full selection's queries asked
    stopped: list[int] = field(default_factory=list)  # per run, the last stage asked
    early_failures: int = 0  # failed before its last stage

    @property
    def rate(self) -> float:
        return self.failed / self.runs if self.runs else 0.0

    @property
    def full_rate(self) -> float:
        return self.full_failed / self.runs if self.runs else 0.0

    @property
    def mean_share(self) -> float:
        return self.share / self.runs if self.runs else 0.0


def sequential_run(
    before: Rates, now: Rates, ids: dict[str, list[str]], seed: int, settings: GateSettings
) -> tuple[bool, float, int, bool]:
    """One pair of runs through the plugin's own loop: stages drawn with ``seed`` as the
    plugin draws them, the first stage of every category, then the next stage of the
    categories the decision names. Returns (blocked, share of the full selection's queries
    asked, last stage asked, failed before the last stage)."""
    stages = nested_stages(ids, STAGES, seed)
    sizes = {c: len(members) for c, members in ids.items()}
    asked = dict.fromkeys(ids, 1)
    for number in range(1, len(stages) + 1):
        staged = staged_gate(now, before, settings, stages, asked)
        decision = decide_stage(staged, number, sizes, settings)
        if decision.stop:
            break
        for category in decision.extend:
            asked[category] = number + 1
    cost = queries(i for c, k in asked.items() for i in stages[k - 1][c])
    full = queries(i for members in ids.values() for i in members)
    reached = max(asked.values())
    return decision.failed, cost / full, reached, decision.failed and not decision.last


def sequential_outcome(
    model: Model,
    current: Model,
    reps: int,
    seed: int,
    settings: GateSettings,
    stage_seed: int | None = None,
) -> SequentialOutcome:
    """``reps`` pairs of one-sample runs (baseline of ``model``, current of ``current``), each
    gated sequentially (stages drawn anew per pair, as per commit, unless ``stage_seed`` fixes
    them) and by the full run."""
    rng = random.Random(f"sequential:{seed}")
    ids: dict[str, list[str]] = {}
    for entry_id in model.chances:
        ids.setdefault(entry_id.rsplit("_", 1)[0], []).append(entry_id)
    outcome = SequentialOutcome()
    with _without_stated_drops():
        for _ in range(reps):
            before, now = model.run(1, rng), current.run(1, rng)
            drawn = stage_seed if stage_seed is not None else rng.getrandbits(48)
            blocked, share, reached, early = sequential_run(before, now, ids, drawn, settings)
            outcome.runs += 1
            outcome.failed += blocked
            outcome.full_failed += compare(now, before, settings).failed
            outcome.share += share
            outcome.stopped.append(reached)
            outcome.early_failures += early
    return outcome


@contextmanager
def _without_stated_drops() -> Iterator[None]:
    """The figures need each comparison's p-value and failure, not the drop its row states it
    detects (a third of the gate's time on small categories): left out here. The stopping
    rule's own target drop is computed in full (gate/sequential.py)."""
    original = decision.detectable_drop
    decision.detectable_drop = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        yield
    finally:
        decision.detectable_drop = original


def pull_request_model(flaky: float, seed: int) -> Model:
    sizes = {name: DATASET_SIZES[name] for name in PULL_REQUEST_SELECTION}
    return Model.draw(sizes, flaky, seed)


def outside_first_stage(model: Model, points: float, seed: int, stage_seed: int = 0) -> Model:
    """``points`` of every category, among always-passing entries outside the first stage of
    ``stage_seed`` (the template's former fixed ``--bfcl-seed=0``), now always failing."""
    ids: dict[str, list[str]] = {}
    for entry_id in model.chances:
        ids.setdefault(entry_id.rsplit("_", 1)[0], []).append(entry_id)
    first = nested_stages(ids, STAGES, stage_seed)[0]
    rng = random.Random(f"outside:{seed}")
    chances = dict(model.chances)
    for name, members in ids.items():
        passing = [i for i in members if chances[i] == 1.0 and i not in first[name]]
        for entry_id in rng.sample(passing, min(len(passing), round(points / 100 * len(members)))):
            chances[entry_id] = 0.0
    return Model(chances)


# The placements of a regression (label, watched score, points), all on the pull-request
# selection: uniform, one category of each size, the multi-turn categories only.
PLACEMENTS: tuple[tuple[str, str, float], ...] = (
    ("uniform, 3 points in every category", "overall", 3.0),
    ("live_multiple (1053 entries), 4 points", "live_multiple", 4.0),
    ("simple_python (400), 7 points", "simple_python", 7.0),
    ("multi_turn_miss_param (200), 10 points", "multi_turn_miss_param", 10.0),
    ("simple_java (100), 10 points", "simple_java", 10.0),
    ("simple_java (100), 15 points", "simple_java", 15.0),
    ("simple_javascript (50), 20 points", "simple_javascript", 20.0),
    ("live_parallel_multiple (24), 35 points", "live_parallel_multiple", 35.0),
    ("the four multi-turn categories, 4 points each", "multi_turn", 4.0),
)


def sequential_main(reps: int, flaky: float, seed: int, only: str | None = None) -> None:
    settings = GateSettings()
    model = pull_request_model(flaky, seed)
    print(
        f"sequential gate, stages {', '.join(f'{s:.0%}' for s in STAGES)} of "
        f"{len(model.chances)} single-turn and multi-turn entries, {flaky:.0%} flaky, "
        f"{reps} pairs of runs per row, stages drawn anew per pair unless fixed"
    )
    cases: list[tuple[str, Model, int | None]] = [("unchanged model", model, None)]
    for label, watch, points in PLACEMENTS:
        cases.append((label, model.regressed(watch, points, seed), None))
    outside = outside_first_stage(model, 3.0, seed)
    cases.append(("3 points per category outside seed 0's first stage", outside, None))
    cases.append(("the same, stages fixed with --bfcl-seed=0", outside, 0))
    print("| regression | sequential blocked | full run blocked | queries asked (mean) | "
          "stopped after stage 1 / 2 / 3 | failed early |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- |")
    for number, (label, current, fixed) in enumerate(cases):
        if only is not None and not any(part in label for part in only.split(",")):
            continue
        out = sequential_outcome(model, current, reps, seed + number, settings, fixed)
        stops = " / ".join(str(out.stopped.count(n)) for n in range(1, len(STAGES) + 1))
        print(
            f"| {label} | {out.failed}/{out.runs} ({out.rate:.1%}) | {out.full_failed}/"
            f"{out.runs} ({out.full_rate:.1%}) | {out.mean_share:.1%} | {stops} | "
            f"{out.early_failures} |",
            flush=True,
        )


def _members(model: Model, watch: str) -> set[str]:
    """The categories a watched score (a category, a group or the overall) is made of."""
    names = {entry_id.rsplit("_", 1)[0] for entry_id in model.chances}
    if watch in names:
        return {watch}
    return _leaves(watch) & names


def _leaves(group: str) -> set[str]:
    """The categories of a group (a group's member is a group where one of that name exists
    and is not the group itself: Irrelevance holds the irrelevance category)."""
    parts = OVERALL_WEIGHTS if group == "overall" else BY_NAME[group].members
    return {
        leaf
        for part in parts
        for leaf in (_leaves(part) if part in BY_NAME and part != group else {part})
    }


if __name__ == "__main__":
    main()
