"""The score board: per-category tallies of verdicts, skips and errors, and the run's scores
(categories, the leaderboard's groups and overall from :mod:`.aggregate`, format
sensitivity). A category that was not run makes the overall partial, never a silent zero.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from pytest_bfcl.dataset.categories import (
    ALL_SCORING,
    DATASET_SIZES,
    FORMAT_SENSITIVITY,
    WEB_SEARCH,
    category_of_id,
    natural_key,
)
from pytest_bfcl.dataset.groups import GROUPS
from pytest_bfcl.scores.aggregate import aggregate_groups, category_weights
from pytest_bfcl.scores.clustered import crossing_inflation
from pytest_bfcl.scores.intervals import mean_interval, mean_variance
from pytest_bfcl.scores.models import CategoryScore, FormatSensitivity, GroupScore, Scores

__all__ = ["CategoryScore", "FormatSensitivity", "GroupScore", "ScoreBoard", "Scores", "Tally"]


@dataclass
class Tally:
    correct: int = 0  # entries that passed (every sample, when asked several times)
    total: int = 0  # entries scored (valid or not)
    # Repeated samples: passes and samples summed over entries, entries with at least one
    # pass, each entry's pass rate, and the entries that both passed and failed.
    passes: int = 0
    draws: int = 0
    any_pass: int = 0
    samples: int = 1
    rates: list[float] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # the entries of ``rates``, in order
    flaky_ids: list[str] = field(default_factory=list)
    skipped: int = 0
    errors: int = 0  # entries that could not be scored (infrastructure)
    excluded: int = 0  # skipped by the run's own options (web search off, fc-mode format runs)
    tool_failures: dict[str, int] = field(default_factory=dict)  # failed searches, fetches
    failed_ids: list[str] = field(default_factory=list)
    skip_reasons: dict[str, int] = field(default_factory=dict)

    @property
    def accuracy(self) -> float | None:
        """The mean pass rate (with one sample, correct / total)."""
        return self.passes / self.draws if self.draws else None

    def add(self, entry_id: str, passes: int, samples: int) -> None:
        self.total += 1
        self.correct += int(passes == samples)
        self.passes += passes
        self.draws += samples
        self.any_pass += int(passes > 0)
        self.samples = max(self.samples, samples)
        self.rates.append(passes / samples)
        self.ids.append(entry_id)
        if 0 < passes < samples:
            self.flaky_ids.append(entry_id)


class ScoreBoard:
    """Collects verdicts as they arrive (in any order, from any worker)."""

    def __init__(self) -> None:
        self.tallies: dict[str, Tally] = {}
        self.format_configs: dict[str, Tally] = {}
        self.verdicts: dict[str, bool] = {}  # entry id -> valid, for baselines and the gate
        # Entries asked several times: (passes, samples); absent for one sample.
        self.rates: dict[str, tuple[int, int]] = {}
        # What the run was asked to score, per category (set by the controller before the run).
        self.expected: dict[str, set[str]] = {}
        # Sampled runs: the size of each sampled category (the population of its sample).
        self.populations: dict[str, int] = {}
        # Entry id -> the cluster it belongs to (pytest_bfcl.dataset.clusters; set by the
        # controller): intervals count a cluster as one unit of evidence.
        self.clusters: dict[str, str] = {}
        self.latencies: list[float] = []
        self.input_tokens = 0
        self.output_tokens = 0
        self.steps = 0
        self.cached_steps = 0  # of the steps, answered from the response cache

    def _tally(self, category: str) -> Tally:
        return self.tallies.setdefault(category, Tally())

    def add_verdict(
        self,
        entry_id: str,
        category: str,
        valid: bool,
        passes: int | None = None,
        samples: int | None = None,
    ) -> None:
        """``passes`` of ``samples``: an entry asked several times (``valid``: every sample
        passed); one sample when not given."""
        if passes is None or samples is None or samples < 1:
            passes, samples = int(valid), 1
        self.verdicts[entry_id] = valid
        if samples > 1:
            self.rates[entry_id] = (passes, samples)
        tally = self._tally(category)
        tally.add(entry_id, passes, samples)
        if not valid:
            tally.failed_ids.append(entry_id)
        if category == FORMAT_SENSITIVITY:
            config = entry_id.split(":")[1]
            self.format_configs.setdefault(config, Tally()).add(entry_id, passes, samples)

    def rate(self, entry_id: str) -> tuple[int, int]:
        """An entry's (passes, samples)."""
        return self.rates.get(entry_id) or (int(self.verdicts[entry_id]), 1)

    def verdict_rates(self) -> dict[str, tuple[int, int]]:
        """Every scored entry's (passes, samples), for the gate and baselines."""
        return {entry_id: self.rate(entry_id) for entry_id in self.verdicts}

    def add_measurements(
        self, latency: Any, input_tokens: Any, output_tokens: Any, steps: Any = None
    ) -> None:
        self.steps += int(steps) if isinstance(steps, int | float) else 1
        if isinstance(latency, int | float):
            self.latencies.append(float(latency))
        self.input_tokens += int(input_tokens) if isinstance(input_tokens, int | float) else 0
        self.output_tokens += int(output_tokens) if isinstance(output_tokens, int | float) else 0

    def expect(
        self, expected: dict[str, set[str]], populations: dict[str, int] | None = None
    ) -> None:
        """The entries the run must score, per category; what lacks a verdict at the end is
        reported as missing, and an incomplete run cannot pass a gate unnoticed.
        ``populations``: for a sampled run, each category's full size."""
        for category, ids in expected.items():
            self.expected.setdefault(category, set()).update(ids)
        self.populations.update(populations or {})

    def leave_out(self, deselected: set[str]) -> tuple[int, int] | None:
        """Expect none of the ``deselected`` entries (the command line narrowed the
        selection: a node path, -k, -m, --deselect, --lf); returns (still expected, expected
        before), or None when none of them was expected. Entries selected but not scored stay
        missing."""
        before = sum(len(ids) for ids in self.expected.values())
        narrowed = {c: ids - deselected for c, ids in self.expected.items()}
        kept = sum(len(ids) for ids in narrowed.values())
        if kept == before:
            return None
        self.expected = {c: ids for c, ids in narrowed.items() if ids}
        return kept, before

    def add_tool_failures(self, category: str, search: int, fetch: int) -> None:
        if not (search or fetch):
            return
        failures = self._tally(category).tool_failures
        failures["search"] = failures.get("search", 0) + search
        failures["fetch"] = failures.get("fetch", 0) + fetch

    def add_skip(self, category: str, reason: str = "", excluded: bool = False) -> None:
        tally = self._tally(category)
        if excluded:
            tally.excluded += 1
        else:
            tally.skipped += 1
        if reason:
            tally.skip_reasons[reason] = tally.skip_reasons.get(reason, 0) + 1

    def add_error(self, category: str) -> None:
        self._tally(category).errors += 1

    # -- aggregation --------------------------------------------------------------------------

    def category_scores(self) -> dict[str, CategoryScore]:
        out = {}
        for name in {**self.tallies, **self.expected}:
            tally = self.tallies.get(name) or Tally()
            size = DATASET_SIZES.get(name, tally.total + tally.skipped + tally.errors)
            expected = self.expected.get(name)
            missing = len(expected - self.verdicts.keys()) if expected is not None else 0
            population = self.populations.get(name)
            sampled = population is not None and expected is not None and missing == 0
            of = population if sampled else None
            keys = self._cluster_keys(tally)
            interval = mean_interval(tally.rates, tally.samples, of, keys) if sampled else None
            out[name] = CategoryScore(
                accuracy=tally.accuracy,
                correct=tally.correct,
                total=tally.total,
                skipped=tally.skipped,
                errors=tally.errors,
                dataset_size=size,
                # a sampled category is complete when its whole sample was scored
                complete=tally.total == size or (sampled and tally.total > 0),
                sampled_from=population,
                ci_low=interval[0] if interval else None,
                ci_high=interval[1] if interval else None,
                skip_reasons=dict(tally.skip_reasons),
                expected=None if expected is None else len(expected),
                missing=missing,
                not_run=max(0, missing - tally.skipped - tally.errors),
                excluded=tally.excluded,
                tool_failures=dict(tally.tool_failures),
                **_sample_fields(tally, of, keys),
            )
        return dict(sorted(out.items(), key=lambda kv: _order(kv[0])))

    def _cluster_keys(self, tally: Tally) -> list[str]:
        return [self.clusters.get(entry_id, entry_id) for entry_id in tally.ids]

    def _crossing(self, cats: dict[str, CategoryScore]) -> dict[str, float]:
        """Per group, how much clusters crossing its categories widen its variance."""
        names = (*(g.name for g in GROUPS), "overall", "overall_without_web_search")
        present = {n: c for n, c in cats.items() if n in self.tallies and c.accuracy is not None}
        weights = category_weights(present, names)
        entries = {
            name: list(zip(self._cluster_keys(t), t.rates, strict=True))
            for name, t in self.tallies.items()
        }
        return {name: crossing_inflation(weights[name], entries) for name in names}

    def unpaired(self, baseline: dict[str, bool], covered: set[str]) -> list[str]:
        """Entries scored in this run, in categories the baseline covers, that have no
        baseline verdict: the gate cannot tell whether they regressed."""
        return sorted(
            (i for i in self.verdicts if i not in baseline and category_of_id(i) in covered),
            key=natural_key,
        )

    def scores(self, partial_eval: bool = False) -> Scores:
        """``partial_eval``: the leaderboard's ``--partial-eval`` semantics, each category scored
        over the entries present and every category with any entry counted as run."""
        cats = self.category_scores()
        inflation = self._crossing(cats) if self.clusters else None
        groups = aggregate_groups(cats, sized_by_run=partial_eval, inflation=inflation)
        overall = groups.pop("overall")
        without_web = groups.pop("overall_without_web_search")
        web_only_missing = bool(overall.missing) and set(overall.missing) <= set(WEB_SEARCH)
        return Scores(
            categories=cats,
            groups=groups,
            overall=overall,
            partial=bool(overall.missing),
            partial_eval=partial_eval,
            format_sensitivity=self._format_sensitivity(),
            overall_without_web_search=without_web.accuracy if web_only_missing else None,
        )

    def _format_sensitivity(self) -> FormatSensitivity | None:
        if not self.format_configs:
            return None
        configs = {
            name: CategoryScore(
                accuracy=t.accuracy,
                correct=t.correct,
                total=t.total,
                dataset_size=t.total,
                complete=True,
            )
            for name, t in self.format_configs.items()
        }
        accuracies = [c.accuracy for c in configs.values() if c.accuracy is not None]
        if len(accuracies) <= 1:
            return FormatSensitivity(configs=configs, max_delta=0.0, std=0.0, variance=0.0)
        return FormatSensitivity(
            configs=configs,
            max_delta=max(accuracies) - min(accuracies),
            std=statistics.stdev(accuracies),
            variance=statistics.variance(accuracies),
        )


def _sample_fields(
    tally: Tally, population: int | None, clusters: list[str] | None = None
) -> dict[str, Any]:
    """A category's repeated-sample figures (see :class:`CategoryScore`)."""
    if not tally.total:
        return {"samples": tally.samples}
    return {
        "samples": tally.samples,
        "ci95": mean_interval(tally.rates, tally.samples, population, clusters),
        "pass_all": tally.correct / tally.total,
        "pass_any": tally.any_pass / tally.total,
        "flaky": len(tally.flaky_ids),
        "flaky_ids": sorted(tally.flaky_ids, key=natural_key),
        "variance": mean_variance(tally.rates, tally.samples, population, clusters),
    }


def _order(category: str) -> int:
    try:
        return (*ALL_SCORING, FORMAT_SENSITIVITY).index(category)
    except ValueError:
        return len(ALL_SCORING) + 1
