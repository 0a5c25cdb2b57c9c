"""Latency percentiles, token totals, throughput and cost of a run."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel


class Prices(BaseModel):
    """USD per million tokens."""

    input: float | None = None
    output: float | None = None


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    index = min(len(sorted_values) - 1, max(0, math.ceil(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


def usage_summary(
    latencies: list[float],
    input_tokens: int,
    output_tokens: int,
    steps: int,
    wall_seconds: float | None,
    prices: Prices | None = None,
) -> dict[str, Any]:
    values = sorted(v for v in latencies if v is not None)
    summary: dict[str, Any] = {
        "entries_measured": len(values),
        "model_queries": steps,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "latency_s": None,
        "wall_s": round(wall_seconds, 3) if wall_seconds is not None else None,
        "entries_per_s": None,
        "cost_usd": None,
    }
    if values:
        summary["latency_s"] = {
            "mean": round(sum(values) / len(values), 4),
            "p50": percentile(values, 0.50),
            "p90": percentile(values, 0.90),
            "p95": percentile(values, 0.95),
            "p99": percentile(values, 0.99),
            "max": values[-1],
        }
    if wall_seconds:
        summary["entries_per_s"] = round(len(values) / wall_seconds, 3)
    if prices is not None and (prices.input is not None or prices.output is not None):
        summary["cost_usd"] = round(
            input_tokens * (prices.input or 0.0) / 1e6
            + output_tokens * (prices.output or 0.0) / 1e6,
            6,
        )
    return summary


def usage_line(summary: dict[str, Any]) -> str | None:
    latency = summary.get("latency_s")
    if not latency:
        return None
    parts = [
        f"latency p50 {latency['p50']:.2f}s p95 {latency['p95']:.2f}s max {latency['max']:.2f}s",
        f"tokens in {summary['input_tokens']:,} out {summary['output_tokens']:,}",
        f"{summary['model_queries']:,} model queries",
    ]
    if summary.get("entries_per_s"):
        parts.append(f"{summary['entries_per_s']:.1f} entries/s")
    if summary.get("cost_usd") is not None:
        parts.append(f"cost ${summary['cost_usd']:.4f}")
    return "usage: " + ", ".join(parts)
