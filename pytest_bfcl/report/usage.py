"""Latency percentiles, token totals, throughput and cost of a run, and how each replica of
the model server fared."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel

from pytest_bfcl.redact import redact_data
from pytest_bfcl.scores.board import ScoreBoard


class Prices(BaseModel):
    """USD per million tokens."""

    input: float | None = None
    output: float | None = None


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    index = min(len(sorted_values) - 1, max(0, math.ceil(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


def latency_figures(sorted_values: list[float]) -> dict[str, float] | None:
    """Mean, percentiles and maximum of already sorted latencies (``None`` when there are
    none)."""
    if not sorted_values:
        return None
    return {
        "mean": round(sum(sorted_values) / len(sorted_values), 4),
        "p50": percentile(sorted_values, 0.50),
        "p90": percentile(sorted_values, 0.90),
        "p95": percentile(sorted_values, 0.95),
        "p99": percentile(sorted_values, 0.99),
        "max": sorted_values[-1],
    }


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
        "latency_s": latency_figures(values),
        "wall_s": round(wall_seconds, 3) if wall_seconds is not None else None,
        "entries_per_s": None,
        "cost_usd": None,
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
        f"{summary['model_queries']:,} model queries" + _from_cache(summary),
    ]
    if summary.get("entries_per_s"):
        parts.append(f"{summary['entries_per_s']:.1f} entries/s")
    if summary.get("cost_usd") is not None:
        parts.append(f"cost ${summary['cost_usd']:.4f}")
    return "usage: " + ", ".join(parts)


def _from_cache(summary: dict[str, Any]) -> str:
    """How many of the queries were answered from the response cache (not sent): a cache
    shared by servers of one served name answers for all of them."""
    cached = summary.get("cached_queries") or 0
    if not cached:
        return ""
    return f" ({'all' if cached >= summary['model_queries'] else f'{cached:,}'} from the cache)"


def replica_summary(reports: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per replica, over every process that sent requests (the controller and each xdist
    worker balance on their own): requests, answers, errors by kind, latency percentiles of
    the answered requests, ejections (summed: each process takes a replica out on its own),
    the states it ended in, and the conversation steps kept on it and moved elsewhere."""
    merged: dict[str, dict[str, Any]] = {}
    for report in reports:
        for stats in report:
            into = merged.setdefault(
                stats["base_url"],
                {
                    "base_url": stats["base_url"],
                    "requests": 0,
                    "answered": 0,
                    "errors": {},
                    "ejections": 0,
                    "kept": 0,
                    "moved": 0,
                    "latencies": [],
                    "states": set(),
                    "reasons": [],
                },
            )
            for key in ("requests", "answered", "ejections"):
                into[key] += stats[key]
            for key in ("kept", "moved"):
                into[key] += stats.get(key, 0)
            for kind, count in stats["errors"].items():
                into["errors"][kind] = into["errors"].get(kind, 0) + count
            into["latencies"].extend(stats["latencies"])
            if stats["requests"] or stats["state"] != "in rotation":
                into["states"].add(stats["state"])  # a process that never used it: no news
            if stats.get("reason") and stats["reason"] not in into["reasons"]:
                into["reasons"].append(stats["reason"])
    return [_replica_figures(m) for m in merged.values()]


def _replica_figures(merged: dict[str, Any]) -> dict[str, Any]:
    latency = latency_figures(sorted(merged.pop("latencies")))
    errors = merged["errors"]
    return {
        **merged,
        "errors": sum(errors.values()),
        "errors_by_kind": dict(sorted(errors.items())),
        "latency_s": latency,
        "states": sorted(merged["states"]),
        "reasons": merged["reasons"][-3:],  # the latest distinct ones
    }


def replica_lines(replicas: list[dict[str, Any]]) -> list[str]:
    """A line per replica under the usage line, when there are several (one server's figures
    are the usage line's own)."""
    if len(replicas) < 2:
        return []
    lines = []
    for replica in replicas:
        latency = replica["latency_s"]
        timing = (
            f"p50 {latency['p50']:.2f}s p90 {latency['p90']:.2f}s p99 {latency['p99']:.2f}s"
            if latency
            else "no answers"
        )
        errors = ", ".join(f"{n} {kind}" for kind, n in replica["errors_by_kind"].items())
        line = (
            f"  replica {replica['base_url']}: {replica['requests']:,} requests, "
            f"{replica['errors']:,} errors{f' ({errors})' if errors else ''}, {timing}, "
            f"{replica['ejections']} ejections"
        )
        out = [s for s in replica["states"] if s != "in rotation"]
        if out and replica["reasons"]:
            line += f"; ended {'/'.join(out)}: {replica['reasons'][-1]}"
        lines.append(line)
    return lines


def run_usage(
    board: ScoreBoard, replicas: list[list[dict[str, Any]]], wall: float | None, prices: Prices
) -> dict[str, Any]:
    """The usage report of a run: latencies, tokens and cost from the board, the replicas'
    figures merged over the processes (masked: they name the servers' URLs), cached queries."""
    summary = usage_summary(
        board.latencies, board.input_tokens, board.output_tokens, board.steps, wall, prices
    )
    merged = replica_summary(replicas)
    if merged:
        summary["replicas"] = redact_data(merged)
    summary["cached_queries"] = board.cached_steps
    return summary
