"""The leaderboard's six CSV score tables (``data_overall.csv`` and the per-group files), in the
reference's column layout, for the model of this run: cells unquoted, percentages as
``"12.34%"``, "N/A" where a category was not run, rows joined by newlines with none at the end."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.categories import EXECUTABLE
from pytest_bfcl.dataset.load import FORMAT_CONFIGS
from pytest_bfcl.files import write_text_atomic
from pytest_bfcl.scores.models import Scores

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


def _latency_stats(latencies: list[float]) -> tuple[Any, Any, Any]:
    """(mean, std, p95) of the latencies, rounded as the reference rounds them."""
    values = [v for v in latencies if v]
    if not values:
        return NA, NA, NA
    mean = round(statistics.mean(values), 2)
    std = round(statistics.stdev(values), 2) if len(values) > 1 else NA
    ordered = sorted(values)
    position = 0.95 * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    p95 = round(ordered[low] + (ordered[high] - ordered[low]) * (position - low), 2)
    return mean, std, p95


@dataclass(frozen=True)
class Column:
    """One column: its header, its value for this run, and how it is written (a percentage,
    or raw text and numbers)."""

    header: str
    value: Any
    raw: bool = False

    def cell(self) -> str:
        return _raw(self.value) if self.raw else _pct(self.value)


def _table(columns: list[Column]) -> str:
    """The header row and the model's row, ranked 1, cells unquoted, no newline at the end."""
    header = ["Rank", *(c.header for c in columns)]
    row = ["1", *(c.cell() for c in columns)]
    return "\n".join([",".join(header), ",".join(row)])


def _raw_column(header: str, value: Any) -> Column:
    return Column(header, value, raw=True)


def csv_tables(
    scores: Scores, model: str, latencies: list[float], cost_usd: float | None = None
) -> dict[str, str]:
    """``cost_usd``: the run's cost from its tokens and the prices given (--bfcl-price-input,
    --bfcl-price-output); without prices the cost column says N/A rather than guess one (the
    reference prices latency at a self-hosted rate, a figure no run of ours paid)."""
    r = _Row(scores)
    fs = scores.format_sensitivity
    fs_delta = round(fs.max_delta * 100, 2) if fs and fs.max_delta is not None else None
    fs_std = round(fs.std * 100, 2) if fs and fs.std is not None else None
    mean, std, p95 = _latency_stats(latencies)
    cost = NA if cost_usd is None else round(cost_usd, 2)
    overall = [
        Column("Overall Acc", r.group("overall", always_numeric=True)),
        _raw_column("Model", model),
        _raw_column("Model Link", NA),
        _raw_column("Total Cost ($)", cost),
        _raw_column("Latency Mean (s)", mean),
        _raw_column("Latency Standard Deviation (s)", std),
        _raw_column("Latency 95th Percentile (s)", p95),
        Column("Non-Live AST Acc", r.group("non_live")),
        Column("Non-Live Simple AST", r.group("simple")),
        Column("Non-Live Multiple AST", r.cat("multiple")),
        Column("Non-Live Parallel AST", r.cat("parallel")),
        Column("Non-Live Parallel Multiple AST", r.cat("parallel_multiple")),
        Column("Live Acc", r.group("live", always_numeric=True)),
        Column("Live Simple AST", r.cat("live_simple")),
        Column("Live Multiple AST", r.cat("live_multiple")),
        Column("Live Parallel AST", r.cat("live_parallel")),
        Column("Live Parallel Multiple AST", r.cat("live_parallel_multiple")),
        Column("Multi Turn Acc", r.group("multi_turn", always_numeric=True)),
        Column("Multi Turn Base", r.cat("multi_turn_base")),
        Column("Multi Turn Miss Func", r.cat("multi_turn_miss_func")),
        Column("Multi Turn Miss Param", r.cat("multi_turn_miss_param")),
        Column("Multi Turn Long Context", r.cat("multi_turn_long_context")),
        Column("Web Search Acc", r.group("web_search")),
        Column("Web Search Base", r.cat("web_search_base")),
        Column("Web Search No Snippet", r.cat("web_search_no_snippet")),
        Column("Memory Acc", r.group("memory")),
        Column("Memory KV", r.cat("memory_kv")),
        Column("Memory Vector", r.cat("memory_vector")),
        Column("Memory Recursive Summarization", r.cat("memory_rec_sum")),
        Column("Relevance Detection", r.group("relevance")),
        Column("Irrelevance Detection", r.group("irrelevance_detection")),
        _raw_column("Format Sensitivity Max Delta", fs_delta),
        _raw_column("Format Sensitivity Standard Deviation", fs_std),
        _raw_column("Organization", NA),
        _raw_column("License", NA),
    ]
    non_live = [
        _raw_column("Model", model),
        Column("Non-Live Overall Acc", r.group("non_live", always_numeric=True)),
        Column("AST Summary", r.group("non_live")),
        Column("Simple AST", r.group("simple")),
        Column("Python Simple AST", r.cat("simple_python")),
        Column("Java Simple AST", r.cat("simple_java")),
        Column("JavaScript Simple AST", r.cat("simple_javascript")),
        Column("Multiple AST", r.cat("multiple")),
        Column("Parallel AST", r.cat("parallel")),
        Column("Parallel Multiple AST", r.cat("parallel_multiple")),
        Column("Irrelevance Detection", r.cat("irrelevance")),
    ]
    live = [
        _raw_column("Model", model),
        Column("Live Overall Acc", r.group("live", always_numeric=True)),
        Column("AST Summary", r.group("live")),
        Column("Python Simple AST", r.cat("live_simple")),
        Column("Python Multiple AST", r.cat("live_multiple")),
        Column("Python Parallel AST", r.cat("live_parallel")),
        Column("Python Parallel Multiple AST", r.cat("live_parallel_multiple")),
        Column("Irrelevance Detection", r.cat("live_irrelevance")),
        Column("Relevance Detection", r.cat("live_relevance")),
    ]
    multi_turn = [
        _raw_column("Model", model),
        Column("Multi Turn Overall Acc", r.group("multi_turn", always_numeric=True)),
        Column("Base", r.cat("multi_turn_base")),
        Column("Miss Func", r.cat("multi_turn_miss_func")),
        Column("Miss Param", r.cat("multi_turn_miss_param")),
        Column("Long Context", r.cat("multi_turn_long_context")),
    ]
    agentic = [
        _raw_column("Model", model),
        Column("Agentic Overall Acc", r.group("agentic", always_numeric=True)),
        Column("Web Search Summary", r.group("web_search")),
        Column("Web Search Base", r.cat("web_search_base")),
        Column("Web Search No Snippet", r.cat("web_search_no_snippet")),
        Column("Memory Summary", r.group("memory")),
        Column("Memory KV", r.cat("memory_kv")),
        Column("Memory Vector", r.cat("memory_vector")),
        Column("Memory Recursive Summarization", r.cat("memory_rec_sum")),
    ]
    configs = fs.configs if fs else {}
    format_sensitivity = [
        _raw_column("Model", model),
        _raw_column("Format Sensitivity Max Delta", fs_delta),
        _raw_column("Format Sensitivity Standard Deviation", fs_std),
        *(
            Column(f"Config {c}", configs[c].accuracy if c in configs else None)
            for c in FORMAT_CONFIGS
        ),
    ]
    tables = {
        "data_overall.csv": _table(overall),
        "data_non_live.csv": _table(non_live),
        "data_live.csv": _table(live),
        "data_multi_turn.csv": _table(multi_turn),
        "data_agentic.csv": _table(agentic),
        "data_format_sensitivity.csv": _table(format_sensitivity),
    }
    tables["data_samples.csv"] = samples_table(scores)
    if any(name in scores.categories for name in EXECUTABLE):
        # Not a leaderboard table (the executable categories left it): written only when they ran.
        tables["data_executable.csv"] = _table(
            [
                _raw_column("Model", model),
                Column("Exec Summary", r.group("exec_summary")),
                *(Column(name, r.cat(name)) for name in EXECUTABLE),
            ]
        )
    return tables


def _number(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.2f}"


def samples_table(scores: Scores) -> str:
    """Not a leaderboard table: per category, group and the overall score, the repeated-sample
    figures (mean pass rate and its 95 % interval, pass^K, pass@K, flaky entries)."""
    header = "Name,Kind,Samples,Entries,Mean,CI95 Low,CI95 High,Pass All,Pass Any,Flaky"
    rows = [header]
    for name, cat in scores.categories.items():
        low, high = cat.ci95 if cat.ci95 is not None else (None, None)
        rows.append(
            f"{name},category,{cat.samples},{cat.total},{_number(cat.accuracy)},{_number(low)},"
            f"{_number(high)},{_number(cat.pass_all)},{_number(cat.pass_any)},{cat.flaky}"
        )
    groups = [(n, g) for n, g in scores.groups.items() if g.accuracy is not None]
    for name, group in [*groups, ("overall", scores.overall)]:
        if group.accuracy is None:
            continue
        low, high = group.ci95 if group.ci95 is not None else (None, None)
        entries = sum(scores.categories[m].total for m in group.members if m in scores.categories)
        kind = "overall" if name == "overall" else "group"
        rows.append(
            f"{name},{kind},{group.samples},{entries},{_number(group.accuracy)},{_number(low)},"
            f"{_number(high)},{_number(group.pass_all)},{_number(group.pass_any)},{group.flaky}"
        )
    return "\n".join(rows) + "\n"


def write_csv_tables(directory: Path, tables: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in tables.items():
        write_text_atomic(directory / name, text)  # a link or a device there is refused
