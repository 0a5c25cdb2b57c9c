"""What a run will cost, said before it asks anything: how many queries it asks at most, and,
where a previous run of the same model measured its pace (queries sent per second of the run,
kept beside the response cache), about how long that takes.

The pace is kept per model identity and concurrency in ``<cache dir>/pace.json``, by the run
that measured it: only runs that sent at least :data:`MIN_QUERIES` queries to the model (not
answered from the cache) record one, so a cached rerun never makes the next estimate
optimistic. Answers already in the cache are not asked again: the figure is an upper bound.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_bfcl.files import read_small_text, write_json_atomic

PACE_FILE = "pace.json"
MIN_QUERIES = 20  # queries sent before a run's pace says anything about the next
MAX_KEPT = 50  # models kept in the file (the most recent)
PACE_FILE_MAX = 1 << 20  # bytes: 50 small records; a larger file is no pace file of ours


class Pace(BaseModel):
    queries_per_s: float
    queries: int
    wall_s: float
    recorded_at: str


def pace_key(metadata: dict[str, Any], concurrency: int) -> str:
    """The model as the response cache tells it apart (its name and identity), and the
    concurrency it was asked with: a pace holds for that pair only."""
    info = metadata.get("model_info")
    info = info if isinstance(info, dict) else {}
    ident = json.dumps(
        [metadata.get("model"), info.get("identity"), metadata.get("mode"), concurrency],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(ident.encode()).hexdigest()[:24]


def read_pace(cache_dir: Path, key: str) -> Pace | None:
    """The pace a previous run recorded for ``key``; None when there is none or the file is
    unreadable (an estimate is never worth a failed run)."""
    try:
        data = json.loads(read_small_text(cache_dir / PACE_FILE, PACE_FILE_MAX))
        return Pace.model_validate(data[key]) if isinstance(data, dict) and key in data else None
    except (OSError, ValueError, RecursionError, ValidationError, TypeError):
        return None


def record_pace(cache_dir: Path, key: str, sent: int, wall_s: float | None) -> Pace | None:
    """Keep this run's pace for the next estimate, when it sent enough queries to measure one;
    a cache directory that cannot be written keeps nothing."""
    if wall_s is None or wall_s <= 0 or sent < MIN_QUERIES:
        return None
    pace = Pace(
        queries_per_s=round(sent / wall_s, 4),
        queries=sent,
        wall_s=round(wall_s, 2),
        recorded_at=datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    )
    path = cache_dir / PACE_FILE
    try:
        data = json.loads(read_small_text(path, PACE_FILE_MAX)) if path.is_file() else {}
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):
        data = {}
    data.pop(key, None)
    data[key] = pace.model_dump()
    kept = dict(list(data.items())[-MAX_KEPT:])
    try:
        os.makedirs(cache_dir, exist_ok=True)
        write_json_atomic(path, kept)
    except OSError:
        return None
    return pace


def estimate_line(entries: int, queries: int, pace: Pace | None) -> str:
    """``bfcl: this run asks at most 3,641 queries (3,641 entries); about 12m at 5.10
    queries/s, ...``: what the run will ask, and how long, where a pace is known."""
    line = f"bfcl: this run asks at most {queries:,} model queries ({entries:,} entries"
    line += "; answers in the response cache are not asked again)"
    if pace is None or pace.queries_per_s <= 0:
        return (
            line + "; no pace of this model measured here yet (a run that sends queries keeps one)"
        )
    return (
        f"{line}; about {duration(queries / pace.queries_per_s)} at {pace.queries_per_s:.2f} "
        f"queries/s, the pace this model's run of {pace.recorded_at} measured "
        f"({pace.queries:,} queries in {duration(pace.wall_s)})"
    )


def duration(seconds: float) -> str:
    """``45s``, ``12m``, ``3h 05m``."""
    if seconds < 60:
        return f"{max(1, round(seconds))}s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes}m"
    return f"{minutes // 60}h {minutes % 60:02d}m"


def run_estimate(run: Any, expected: dict[str, set[str]], key: str) -> str:
    """The estimate line of a run about to ask the entries ``expected`` (by category): at the
    pace ``--bfcl-pace`` states, else at the one the last run of this model measured."""
    ids = set().union(*expected.values()) if expected else set()
    queries = sum(run.expected_requests(i) for i in ids)
    stated = run.settings.pace
    if stated is not None:
        line = estimate_line(len(ids), queries, None).split("; no pace", 1)[0]
        return f"{line}; about {duration(queries / stated)} at the {stated:g} queries/s stated"
    return estimate_line(len(ids), queries, read_pace(run.settings.cache_dir, key))


def record_run_pace(cache_dir: Path, key: str, usage: dict[str, Any]) -> Pace | None:
    """Keep a finished run's pace: the queries it sent (not answered from the cache) over its
    wall time."""
    sent = int(usage.get("model_queries") or 0) - int(usage.get("cached_queries") or 0)
    return record_pace(cache_dir, key, sent, usage.get("wall_s"))
