"""Stratified, seeded samples and the parsing of sample sizes and thresholds."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pytest_bfcl.option_rules import parse_sample, parse_threshold
from pytest_bfcl.run.sampling import allocate, stratified_sample


def test_sampling_is_stratified_and_seeded():
    assert parse_sample("0.1") == 0.1 and parse_sample("10%") == 0.1 and parse_sample("200") == 200
    with pytest.raises(ValueError):
        parse_sample("0")
    sizes = {"a": 400, "b": 100, "c": 0}
    assert allocate(sizes, 0.1) == {"a": 40, "b": 10, "c": 0}
    assert allocate(sizes, 50) == {"a": 40, "b": 10, "c": 0}
    assert sum(allocate({"a": 3, "b": 3, "c": 3}, 7).values()) == 7
    population = {"a": [f"a_{i}" for i in range(400)], "b": [f"b_{i}" for i in range(100)]}
    first = stratified_sample(population, 0.1, seed=1)
    assert first == stratified_sample(population, 0.1, seed=1)
    assert first != stratified_sample(population, 0.1, seed=2)
    assert len(first["a"]) == 40 and first["a"] <= set(population["a"])


def test_threshold_parsing():
    assert parse_threshold("live=85") == ("live", 85.0)
    assert parse_threshold("overall=72.5%") == ("overall", 72.5)
    for bad in ("live", "live=abc", "live=120"):
        with pytest.raises(ValueError):
            parse_threshold(bad)


def test_a_count_is_the_whole_samples_size_with_one_entry_of_each_category_at_least():
    rng = random.Random(0)
    for _ in range(3000):
        sizes = {f"c{i}": rng.randint(0, 60) for i in range(rng.randint(1, 6))}
        total, present = sum(sizes.values()), sum(1 for n in sizes.values() if n)
        if total < 2:
            continue
        count = rng.randint(1, total - 1)
        drawn = allocate(sizes, count)
        assert sum(drawn.values()) == max(count, present), (sizes, count, drawn)
        assert all(1 <= drawn[k] <= n for k, n in sizes.items() if n), (sizes, count, drawn)
        assert all(drawn[k] == 0 for k, n in sizes.items() if not n)


def test_the_options_pages_example_of_a_count(dataset):
    page = (Path(__file__).resolve().parents[2] / "docs" / "options.md").read_text("utf-8")
    said = "`--bfcl-sample=5` over `simple_python` (400 entries), `live_parallel` (16) and "
    assert said + "`live_parallel_multiple` (24) asks 3 + 1 + 1 entries" in " ".join(page.split())
    names = ("simple_python", "live_parallel", "live_parallel_multiple")
    sizes = {name: len(dataset.entries(name)) for name in names}
    assert sizes == {"simple_python": 400, "live_parallel": 16, "live_parallel_multiple": 24}
    assert allocate(sizes, 5) == {
        "simple_python": 3,
        "live_parallel": 1,
        "live_parallel_multiple": 1,
    }
    assert allocate(sizes, 44) == {
        "simple_python": 40,
        "live_parallel": 2,
        "live_parallel_multiple": 2,
    }
