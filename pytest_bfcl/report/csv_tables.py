"""The leaderboard's six CSV score tables (``data_overall.csv`` and the per-group files), in the
reference's column layout, for the model of this run: cells unquoted, percentages as
``"12.34%"``, "N/A" where a category was not run, rows joined by newlines with none at the end."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.load import FORMAT_CONFIGS
from pytest_bfcl.report.scores import Scores

NA = "N/A"


class _Row:
    def __init__(self, scores: Scores) -> None:
        self.scores = scores

    def cat(self, name: str) -> float | None:
        score = self.scores.categories.get(name)
        return score.accuracy if score is not None and score.complete else None

    def group(self, name: str, always_numeric: bool = False) -> float | None:
        """``always_numeric``: the leaderboard's figure with not-run categories as 0, for the
        columns where it prints one; N/A all the same when nothing of the group ran."""
        group = self.scores.overall if name == "overall" else self.scores.groups[name]
        if not always_numeric:
            return group.accuracy
        ran = any(self._scored(member) for member in group.members)
        return group.reference_accuracy if ran else None

    def _scored(self, name: str) -> bool:
        score = self.scores.categories.get(name)
        return score is not None and score.total > 0


def _pct(value: Any) -> str:
    if value is None:
        return NA
    if isinstance(value, str):
        return value
    return f"{value * 100:.2f}%"


def _raw(value: Any) -> str:
    return NA if value is None else str(value)


def _latency_stats(latencies: list[float]) -> tuple[Any, Any, Any, Any]:
    """(cost, mean, std, p95) the way the reference derives them from latencies alone."""
    values = [v for v in latencies if v]
    if not values:
        return NA, NA, NA, NA
    cost = round(sum(values) / 3600 * 23.92 / 100, 2)
    mean = round(statistics.mean(values), 2)
    std = round(statistics.stdev(values), 2) if len(values) > 1 else NA
    ordered = sorted(values)
    position = 0.95 * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    p95 = round(ordered[low] + (ordered[high] - ordered[low]) * (position - low), 2)
    return cost, mean, std, p95


def _table(header: list[str], cells: list[Any], raw_columns: set[int]) -> str:
    row = ["1"] + [_raw(v) if i + 1 in raw_columns else _pct(v) for i, v in enumerate(cells)]
    return "\n".join([",".join(header), ",".join(row)])


def csv_tables(scores: Scores, model: str, latencies: list[float]) -> dict[str, str]:
    r = _Row(scores)
    fs = scores.format_sensitivity
    fs_delta = round(fs.max_delta * 100, 2) if fs and fs.max_delta is not None else None
    fs_std = round(fs.std * 100, 2) if fs and fs.std is not None else None
    cost, mean, std, p95 = _latency_stats(latencies)
    overall_header = [
        "Rank",
        "Overall Acc",
        "Model",
        "Model Link",
        "Total Cost ($)",
        "Latency Mean (s)",
        "Latency Standard Deviation (s)",
        "Latency 95th Percentile (s)",
        "Non-Live AST Acc",
        "Non-Live Simple AST",
        "Non-Live Multiple AST",
        "Non-Live Parallel AST",
        "Non-Live Parallel Multiple AST",
        "Live Acc",
        "Live Simple AST",
        "Live Multiple AST",
        "Live Parallel AST",
        "Live Parallel Multiple AST",
        "Multi Turn Acc",
        "Multi Turn Base",
        "Multi Turn Miss Func",
        "Multi Turn Miss Param",
        "Multi Turn Long Context",
        "Web Search Acc",
        "Web Search Base",
        "Web Search No Snippet",
        "Memory Acc",
        "Memory KV",
        "Memory Vector",
        "Memory Recursive Summarization",
        "Relevance Detection",
        "Irrelevance Detection",
        "Format Sensitivity Max Delta",
        "Format Sensitivity Standard Deviation",
        "Organization",
        "License",
    ]
    overall = [
        r.group("overall", always_numeric=True),
        model,
        NA,
        cost,
        mean,
        std,
        p95,
        r.group("non_live"),
        r.group("simple"),
        r.cat("multiple"),
        r.cat("parallel"),
        r.cat("parallel_multiple"),
        r.group("live", always_numeric=True),
        r.cat("live_simple"),
        r.cat("live_multiple"),
        r.cat("live_parallel"),
        r.cat("live_parallel_multiple"),
        r.group("multi_turn", always_numeric=True),
        r.cat("multi_turn_base"),
        r.cat("multi_turn_miss_func"),
        r.cat("multi_turn_miss_param"),
        r.cat("multi_turn_long_context"),
        r.group("web_search"),
        r.cat("web_search_base"),
        r.cat("web_search_no_snippet"),
        r.group("memory"),
        r.cat("memory_kv"),
        r.cat("memory_vector"),
        r.cat("memory_rec_sum"),
        r.group("relevance"),
        r.group("irrelevance"),
        fs_delta,
        fs_std,
        NA,
        NA,
    ]
    tables = {
        "data_overall.csv": _table(overall_header, overall, {2, 3, 4, 5, 6, 7, 32, 33, 34, 35}),
        "data_non_live.csv": _table(
            [
                "Rank",
                "Model",
                "Non-Live Overall Acc",
                "AST Summary",
                "Simple AST",
                "Python Simple AST",
                "Java Simple AST",
                "JavaScript Simple AST",
                "Multiple AST",
                "Parallel AST",
                "Parallel Multiple AST",
                "Irrelevance Detection",
            ],
            [
                model,
                r.group("non_live", always_numeric=True),
                r.group("non_live"),
                r.group("simple"),
                r.cat("simple_python"),
                r.cat("simple_java"),
                r.cat("simple_javascript"),
                r.cat("multiple"),
                r.cat("parallel"),
                r.cat("parallel_multiple"),
                r.cat("irrelevance"),
            ],
            {1},
        ),
        "data_live.csv": _table(
            [
                "Rank",
                "Model",
                "Live Overall Acc",
                "AST Summary",
                "Python Simple AST",
                "Python Multiple AST",
                "Python Parallel AST",
                "Python Parallel Multiple AST",
                "Irrelevance Detection",
                "Relevance Detection",
            ],
            [
                model,
                r.group("live", always_numeric=True),
                r.group("live"),
                r.cat("live_simple"),
                r.cat("live_multiple"),
                r.cat("live_parallel"),
                r.cat("live_parallel_multiple"),
                r.cat("live_irrelevance"),
                r.cat("live_relevance"),
            ],
            {1},
        ),
        "data_multi_turn.csv": _table(
            [
                "Rank",
                "Model",
                "Multi Turn Overall Acc",
                "Base",
                "Miss Func",
                "Miss Param",
                "Long Context",
            ],
            [
                model,
                r.group("multi_turn", always_numeric=True),
                r.cat("multi_turn_base"),
                r.cat("multi_turn_miss_func"),
                r.cat("multi_turn_miss_param"),
                r.cat("multi_turn_long_context"),
            ],
            {1},
        ),
        "data_agentic.csv": _table(
            [
                "Rank",
                "Model",
                "Agentic Overall Acc",
                "Web Search Summary",
                "Web Search Base",
                "Web Search No Snippet",
                "Memory Summary",
                "Memory KV",
                "Memory Vector",
                "Memory Recursive Summarization",
            ],
            [
                model,
                r.group("agentic", always_numeric=True),
                r.group("web_search"),
                r.cat("web_search_base"),
                r.cat("web_search_no_snippet"),
                r.group("memory"),
                r.cat("memory_kv"),
                r.cat("memory_vector"),
                r.cat("memory_rec_sum"),
            ],
            {1},
        ),
    }
    configs = fs.configs if fs else {}
    tables["data_format_sensitivity.csv"] = _table(
        ["Rank", "Model", "Format Sensitivity Max Delta", "Format Sensitivity Standard Deviation"]
        + [f"Config {c}" for c in FORMAT_CONFIGS],
        [model, fs_delta, fs_std]
        + [configs[c].accuracy if c in configs else None for c in FORMAT_CONFIGS],
        {1, 2, 3},
    )
    return tables


def write_csv_tables(directory: Path, tables: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in tables.items():
        (directory / name).write_text(text, encoding="utf-8")
