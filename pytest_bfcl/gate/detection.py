"""What a run of this size can detect: per category, the smallest drop the gate finds with
80 % power, and the plan behind ``--bfcl-detect`` (per category, the fewest entries that detect a
given drop).

Noise is what an unchanged model shows between two runs: measured from repeated samples (this
run's or the baseline's) where there are any, otherwise the assumed 10 % of entries that flip
(:data:`~pytest_bfcl.gate.stats.ASSUMED_DISCORDANCE`).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.groups import GATED
from pytest_bfcl.gate.stats import (
    ASSUMED_DISCORDANCE,
    detectable_drop,
    entries_to_detect,
    noise_from_rates,
)


class Detection(BaseModel):
    name: str
    entries: int
    detectable_drop: float | None  # points; None: no drop can be detected at this size
    noise: float  # the per-entry noise assumed (mean squared difference between two runs)
    measured: bool  # noise measured from repeated samples (else assumed)


def family_size(categories: Iterable[str]) -> int:
    """The comparisons a gate over these categories makes at most: each category, each gated
    group, and the overall score (the level a single drop must reach is alpha over this)."""
    return len(set(categories)) + len(GATED) + 1


def category_noise(
    rates: dict[str, tuple[int, int]], against: int | None = None
) -> dict[str, float]:
    """Per category, the noise measured from entries asked several times, for a comparison
    with a run of ``against`` samples per entry (the same count by default): a merged
    baseline of many samples against a one-sample run has most of the one sample's noise."""
    by_category: dict[str, list[tuple[int, int]]] = {}
    for entry_id, rate in rates.items():
        by_category.setdefault(category_of_id(entry_id), []).append(rate)
    out = {}
    for name, pairs in by_category.items():
        samples = min(k for _, k in pairs)
        measured = noise_from_rates([p / k for p, k in pairs], samples, against)
        if measured is not None:
            out[name] = measured
    return out


def detections(
    sizes: dict[str, int], noise: dict[str, float], alpha: float, min_drop: float
) -> list[Detection]:
    """The smallest detectable drop of each category at its size, and of the whole run."""
    level = alpha / family_size(sizes)
    out = []
    for name, entries in sizes.items():
        measured = name in noise
        value = noise.get(name, ASSUMED_DISCORDANCE)
        drop = detectable_drop(entries, value, level, min_drop=min_drop / 100)
        out.append(
            Detection(
                name=name,
                entries=entries,
                detectable_drop=None if drop is None else round(drop * 100, 2),
                noise=round(value, 4),
                measured=measured,
            )
        )
    total = sum(sizes.values())
    if len(sizes) > 1 and total:
        values = [noise.get(n, ASSUMED_DISCORDANCE) * sizes[n] for n in sizes]
        overall_noise = sum(values) / total
        drop = detectable_drop(total, overall_noise, level, min_drop=min_drop / 100)
        out.append(
            Detection(
                name="all entries",
                entries=total,
                detectable_drop=None if drop is None else round(drop * 100, 2),
                noise=round(overall_noise, 4),
                measured=all(n in noise for n in sizes),
            )
        )
    return out


def plan(
    sizes: dict[str, int],
    drop_points: float,
    noise: dict[str, float],
    alpha: float,
    min_drop: float = 0.0,
) -> dict[str, int]:
    """Per category, the fewest entries whose comparison detects ``drop_points`` (all of the
    category when even that cannot)."""
    level = alpha / family_size(sizes)
    return {
        name: entries_to_detect(
            drop_points / 100,
            noise.get(name, ASSUMED_DISCORDANCE),
            level,
            available,
            min_drop=min_drop / 100,
        )
        for name, available in sizes.items()
    }


def detection_lines(found: list[Detection]) -> list[str]:
    lines = []
    for d in found:
        noise = f"noise {d.noise:.3f} {'measured' if d.measured else 'assumed'}"
        entries = f"{d.entries} {'entry' if d.entries == 1 else 'entries'}"
        if d.detectable_drop is None:
            lines.append(f"{d.name}: {entries} cannot detect any drop ({noise})")
        else:
            lines.append(
                f"{d.name}: {entries} detect a drop of {d.detectable_drop:.2f} points or more "
                f"({noise})"
            )
    return lines


def detection_summary(found: list[Detection], what: str) -> str:
    """One line of what a run of these sizes detects before it asks anything: over all entries,
    the most and the least sensitive category, and the categories too small for any drop."""
    whole = [d for d in found if d.name == "all entries"]
    blind = [d.name for d in found if d.detectable_drop is None]
    seen = sorted(
        (d for d in found if d.detectable_drop is not None and d.name != "all entries"),
        key=lambda d: d.detectable_drop or 0.0,
    )
    parts = []
    if whole and whole[0].detectable_drop is not None:
        parts.append(f"a drop of {whole[0].detectable_drop:.1f} points over all entries")
    if len(seen) == 1:
        parts.append(f"{seen[0].detectable_drop:.1f} points in {seen[0].name}")
    elif seen:
        low, high = seen[0], seen[-1]
        parts.append(
            f"{low.detectable_drop:.1f} ({low.name}) to {high.detectable_drop:.1f} points "
            f"({high.name}) in a category"
        )
    line = f"bfcl: {what} detects (80% power) {'; '.join(parts) or 'no drop'}"
    if blind:
        line += f"; no drop in {', '.join(blind)} (too few entries)"
    return line
