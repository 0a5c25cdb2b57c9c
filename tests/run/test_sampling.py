"""Stratified, seeded samples and the parsing of sample sizes and thresholds."""

from __future__ import annotations

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
