"""The gate's false-alarm rate and power, by simulation over the benchmark's real category
structure (every single-turn, multi-turn and agentic scoring category at its real size, the
gated groups and the overall score: 21 comparisons on a full run).

A simulated model has fixed entries (passing with probability 0.75, then always passing or
always failing) and flaky ones (a share of the entries, each passing a sample with its own
probability between 0.2 and 0.8). A baseline run and a current run of the *same* model are
drawn independently: any gate failure between them is a false alarm. A regression makes a
number of fixed-passing entries of one category (or of every category) always fail.

    python benchmarks/gate_power.py                 # the README's table, about a minute
    python benchmarks/gate_power.py --reps 400 --samples 3 --flaky 0.1

``benchmarks/test_gate_power.py`` checks the promises on a smaller number of repetitions.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass

from pytest_bfcl.dataset.categories import ALL_SCORING, DATASET_SIZES
from pytest_bfcl.report.gate import GateResult, GateSettings, compare
from pytest_bfcl.report.stats import mcnemar_exact
from pytest_bfcl.run.sampling import allocate

Rates = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class Model:
    """Each entry's pass probability (1.0 / 0.0 for fixed entries)."""

    chances: dict[str, float]

    @classmethod
    def draw(cls, sizes: dict[str, int], flaky: float, seed: int) -> Model:
        rng = random.Random(f"model:{seed}")
        chances = {}
        for name, size in sizes.items():
            for i in range(size):
                if rng.random() < flaky:
                    chances[f"{name}_{i}"] = rng.uniform(0.2, 0.8)
                else:
                    chances[f"{name}_{i}"] = 1.0 if rng.random() < 0.75 else 0.0
        return cls(chances)

    def regressed(self, category: str | None, points: float, seed: int) -> Model:
        """The same model with ``points`` of one category's (or every category's) entries,
        among those that always passed, now always failing."""
        rng = random.Random(f"regression:{seed}")
        chances = dict(self.chances)
        names = {k.rsplit("_", 1)[0] for k in chances} if category is None else {category}
        for name in names:
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


def applied_drop(model: Model, regressed: Model, category: str) -> float:
    """The drop in points a regression made (of one category, or of all entries)."""
    ids = [i for i in model.chances if category == "overall" or i.rsplit("_", 1)[0] == category]
    lost = sum(model.chances[i] - regressed.chances[i] for i in ids)
    return 100 * lost / len(ids)


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

    @property
    def rate(self) -> float:
        return self.failed / self.runs if self.runs else 0.0


def simulate(
    model: Model,
    current: Model,
    samples: int,
    reps: int,
    seed: int,
    settings: GateSettings,
    watch: str | None = None,
) -> tuple[Outcome, list[float | None]]:
    """Gate failures over ``reps`` pairs of runs, and the detectable drop the gate stated for
    the ``watch`` comparison in each."""
    rng = random.Random(f"runs:{seed}")
    outcome, stated = Outcome(), []
    for _ in range(reps):
        gate = compare(current.run(samples, rng), model.run(samples, rng), settings)
        outcome.runs += 1
        outcome.failed += any(c.failed for c in gate.comparisons)
        outcome.failed_uncorrected += uncorrected_failure(gate, settings.alpha, settings.min_drop)
        if watch is not None:
            found = [c.detectable_drop for c in gate.comparisons if c.name == watch]
            stated.append(found[0] if found else None)
    return outcome, stated


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--flaky", type=float, default=0.1)
    parser.add_argument("--fraction", type=float, default=None, help="a --bfcl-sample fraction")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    settings = GateSettings()
    sizes = category_sizes(args.fraction)
    model = Model.draw(sizes, args.flaky, args.seed)
    size = f"{sum(sizes.values())} entries" + (
        f" ({args.fraction:g} sample)" if args.fraction else ""
    )
    print(f"{size}, {args.flaky:.0%} flaky, {args.samples} sample(s), {args.reps} pairs of runs")
    unchanged, _ = simulate(model, model, args.samples, args.reps, args.seed, settings)
    print(
        f"unchanged model: gate failed {unchanged.failed}/{unchanged.runs} "
        f"({unchanged.rate:.1%}); uncorrected McNemar per comparison: "
        f"{unchanged.failed_uncorrected}/{unchanged.runs}"
    )
    for category in ("overall", "live_parallel", "simple_python", "multi_turn_base"):
        watch = "overall" if category == "overall" else category
        _, drops = simulate(model, model, args.samples, 20, args.seed + 7, settings, watch)
        known = [d for d in drops if d is not None]
        if not known:
            print(f"{category}: the gate states it cannot detect any drop at this size")
            continue
        drop = sorted(known)[len(known) // 2]
        regressed = model.regressed(None if category == "overall" else category, drop, args.seed)
        caught, _ = simulate(model, regressed, args.samples, args.reps // 2, args.seed + 3,
                             settings)  # fmt: skip
        print(
            f"{category}: stated detectable drop {drop:.2f} points; a drop of "
            f"{applied_drop(model, regressed, category):.2f} caught in "
            f"{caught.failed}/{caught.runs} runs ({caught.rate:.0%})"
        )


if __name__ == "__main__":
    main()
