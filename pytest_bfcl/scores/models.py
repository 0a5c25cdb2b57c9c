"""The score models every report reads: a category's score, a group's (and the overall), the
format-sensitivity diagnostic, and a run's scores."""

from __future__ import annotations

from pydantic import BaseModel, Field, computed_field


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
