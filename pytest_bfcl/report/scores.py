"""Per-category tallies and the leaderboard's aggregation into group scores and the V4 overall.

Aggregation follows the reference: Non-Live = mean(Simple, Multiple, Parallel, Parallel
Multiple) with Simple = mean of the three languages; Live = count-weighted mean of the four live
AST categories; Irrelevance = mean(irrelevance, live_irrelevance); Multi-Turn = mean of four;
Agentic = mean(Web Search, Memory); Overall = 10/10/10/30/40 % of those five.

Unlike the reference, a category that was not run is never counted as zero silently: every
summary that needs it is ``None`` ("not run"), and the overall is marked partial. The reference's
own number (missing categories as 0) is kept beside it for comparison with the leaderboard.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, computed_field

from pytest_bfcl.dataset.categories import (
    ALL_SCORING,
    DATASET_SIZES,
    EXECUTABLE,
    FORMAT_SENSITIVITY,
    WEB_SEARCH,
    category_of_id,
    natural_key,
)
from pytest_bfcl.dataset.groups import GROUPS, OVERALL_WEIGHTS
from pytest_bfcl.report.stats import Z95, mean_interval, mean_variance


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
        if 0 < passes < samples:
            self.flaky_ids.append(entry_id)


class CategoryScore(BaseModel):
    accuracy: float | None
    correct: int
    total: int
    skipped: int = 0
    errors: int = 0
    dataset_size: int
    complete: bool  # every entry of the category was scored
    skip_reasons: dict[str, int] = {}  # why entries were skipped, with counts
    # Completeness against what the run was asked to score (its selection and sample, and the
    # baseline's entries): ``missing`` = expected but without a verdict, of which ``not_run``
    # had no outcome at all (deselected, or the session stopped before them).
    expected: int | None = None
    missing: int = 0
    not_run: int = 0
    excluded: int = 0
    # A sampled run: the category's size the sample was drawn from, and a 95 % confidence
    # interval of its accuracy over the whole category.
    sampled_from: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    # Web-search tools that failed while the entries ran (searches, fetches), so an answer
    # made without working tools is visible.
    tool_failures: dict[str, int] = {}
    # Repeated samples (--bfcl-samples; 1 when each entry was asked once): the mean pass rate
    # (``accuracy``, the estimate of pass@1) and its 95 % interval, the share of entries that
    # passed every sample (pass^K) and any sample (pass@K), and the entries that did both.
    samples: int = 1
    ci95: tuple[float, float] | None = None
    pass_all: float | None = None
    pass_any: float | None = None
    flaky: int = 0
    flaky_ids: list[str] = []
    # The variance of ``accuracy`` (for the groups' intervals); not reported.
    variance: float | None = Field(default=None, exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def scored(self) -> int:
        return self.total

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean(self) -> float | None:
        return self.accuracy


class GroupScore(BaseModel):
    accuracy: float | None  # None when a category it needs was not (fully) run
    reference_accuracy: float  # the reference's figure: missing categories count as 0
    missing: list[str]
    members: list[str] = []  # the categories it is computed from
    # Sampled runs: entries scored and the population they stand for, and a 95 % interval.
    sampled: tuple[int, int] | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    # As for a category (see CategoryScore), combined with the group's own formula.
    samples: int = 1
    ci95: tuple[float, float] | None = None
    pass_all: float | None = None
    pass_any: float | None = None
    flaky: int = 0
    flaky_ids: list[str] = []

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean(self) -> float | None:
        return self.accuracy


class FormatSensitivity(BaseModel):
    configs: dict[str, CategoryScore]
    max_delta: float | None
    std: float | None
    variance: float | None


class Scores(BaseModel):
    categories: dict[str, CategoryScore]
    groups: dict[str, GroupScore]
    overall: GroupScore
    partial: bool
    # Scored as the leaderboard's --partial-eval (categories over the entries present).
    partial_eval: bool = False
    format_sensitivity: FormatSensitivity | None = None
    # When web search was skipped (and nothing else is missing): the overall formula with
    # the agentic score taken from memory alone, so the run still has a comparable summary.
    overall_without_web_search: float | None = None


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
        self.latencies: list[float] = []
        self.input_tokens = 0
        self.output_tokens = 0
        self.steps = 0

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
            interval = mean_interval(tally.rates, tally.samples, of) if sampled else None
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
                **_sample_fields(tally, of),
            )
        return dict(sorted(out.items(), key=lambda kv: _order(kv[0])))

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
        groups = aggregate_groups(cats, sized_by_run=partial_eval)
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


def _sample_fields(tally: Tally, population: int | None) -> dict[str, Any]:
    """A category's repeated-sample figures (see :class:`CategoryScore`)."""
    if not tally.total:
        return {"samples": tally.samples}
    return {
        "samples": tally.samples,
        "ci95": mean_interval(tally.rates, tally.samples, population),
        "pass_all": tally.correct / tally.total,
        "pass_any": tally.any_pass / tally.total,
        "flaky": len(tally.flaky_ids),
        "flaky_ids": sorted(tally.flaky_ids, key=natural_key),
        "variance": mean_variance(tally.rates, tally.samples, population),
    }


def _order(category: str) -> int:
    try:
        return (*ALL_SCORING, FORMAT_SENSITIVITY).index(category)
    except ValueError:
        return len(ALL_SCORING) + 1


# -- the leaderboard's summaries ----------------------------------------------------------------


@dataclass(frozen=True)
class _Part:
    accuracy: float | None  # None: not (fully) run
    reference: float  # missing counted as 0
    count: int  # entries it stands for (the population, for a sample)
    missing: tuple[str, ...]
    members: tuple[str, ...]
    variance: float = 0.0  # of the estimate, when it comes from a sample
    scored: int = 0  # entries actually scored
    sampled: bool = False
    interval: tuple[float, float] | None = None  # a sampled category's own interval


def _leaf(cats: dict[str, CategoryScore], name: str, sized_by_run: bool) -> _Part:
    score = cats.get(name)
    if score is None or score.accuracy is None or not (sized_by_run or score.complete):
        return _Part(None, 0.0, DATASET_SIZES[name], (name,), (name,))
    variance = score.variance or 0.0
    if score.sampled_from is not None:
        return _Part(
            score.accuracy, score.accuracy, score.sampled_from, (), (name,), variance,
            score.total, True, score.ci95,
        )  # fmt: skip
    return _Part(
        score.accuracy, score.accuracy, score.total, (), (name,), variance, score.total,
        False, score.ci95,
    )  # fmt: skip


def _combine(parts: list[_Part], reference: float, weights: list[float]) -> _Part:
    """Parts combined with these weights (normalised here): the estimate, and the variance of
    a weighted sum of independent samples."""
    missing = tuple(m for p in parts for m in p.missing)
    total = sum(weights)
    variance = sum((w / total) ** 2 * p.variance for p, w in zip(parts, weights, strict=True))
    return _Part(
        None if missing else reference,
        reference,
        sum(p.count for p in parts),
        missing,
        tuple(m for p in parts for m in p.members),
        variance,
        sum(p.scored for p in parts),
        any(p.sampled for p in parts),
    )


def _mean(parts: list[_Part]) -> _Part:
    return _combine(parts, sum(p.reference for p in parts) / len(parts), [1.0] * len(parts))


def _count_weighted(parts: list[_Part]) -> _Part:
    total = sum(p.count for p in parts)
    weights = [float(p.count) for p in parts]
    return _combine(parts, sum(p.reference * p.count for p in parts) / total, weights)


def _weighted(parts: list[_Part], weights: list[float]) -> _Part:
    weighted = sum(p.reference * w for p, w in zip(parts, weights, strict=True))
    return _combine(parts, weighted / sum(weights), weights)


def aggregate_groups(
    cats: dict[str, CategoryScore], sized_by_run: bool = False
) -> dict[str, GroupScore]:
    """The leaderboard's summaries (:data:`~pytest_bfcl.dataset.groups.GROUPS`) and the V4
    overall. With ``sized_by_run`` a category counts as present when it has any scored entry
    (comparisons on a sample), weighted by the entries scored. pass^K and pass@K of a group
    combine its categories' with the same formula as the mean."""
    parts = _combined(cats, sized_by_run)
    every = _combined(_with_accuracy(cats, "pass_all"), sized_by_run)
    anyone = _combined(_with_accuracy(cats, "pass_any"), sized_by_run)
    names = [g.name for g in GROUPS] + ["overall", "overall_without_web_search"]
    return {name: _group_score(parts[name], every[name], anyone[name], cats) for name in names}


def _with_accuracy(cats: dict[str, CategoryScore], field_name: str) -> dict[str, CategoryScore]:
    return {
        name: score.model_copy(update={"accuracy": getattr(score, field_name), "ci95": None})
        for name, score in cats.items()
    }


def _combined(cats: dict[str, CategoryScore], sized_by_run: bool) -> dict[str, _Part]:
    parts = {name: _leaf(cats, name, sized_by_run) for name in (*ALL_SCORING, *EXECUTABLE)}
    for group in GROUPS:
        members = [parts[m] for m in group.members]
        parts[group.name] = (
            members[0]
            if len(members) == 1
            else _count_weighted(members)
            if group.combine == "count_weighted"
            else _mean(members)
        )
    weights = list(OVERALL_WEIGHTS.values())
    parts["overall"] = _weighted([parts[n] for n in OVERALL_WEIGHTS], weights)
    # the same formula with the agentic score taken from memory alone (web search skipped)
    without_web = [parts["memory" if n == "agentic" else n] for n in OVERALL_WEIGHTS]
    parts["overall_without_web_search"] = _weighted(without_web, weights)
    return parts


def _group_score(
    part: _Part, every: _Part, anyone: _Part, cats: dict[str, CategoryScore]
) -> GroupScore:
    interval = part.interval  # one category: the same interval as its row
    if interval is None and part.accuracy is not None and len(part.members) > 1:
        half = Z95 * math.sqrt(part.variance)
        interval = (max(0.0, part.accuracy - half), min(1.0, part.accuracy + half))
    low, high = interval if (part.sampled and interval is not None) else (None, None)
    members = [cats[m] for m in part.members if m in cats]
    return GroupScore(
        accuracy=part.accuracy,
        reference_accuracy=part.reference,
        missing=list(part.missing),
        members=list(part.members),
        sampled=(part.scored, part.count) if part.sampled else None,
        ci_low=low,
        ci_high=high,
        samples=max((c.samples for c in members), default=1),
        ci95=interval if part.accuracy is not None else None,
        pass_all=every.accuracy,
        pass_any=anyone.accuracy,
        flaky=sum(c.flaky for c in members),
        flaky_ids=[i for c in members for i in c.flaky_ids],
    )
