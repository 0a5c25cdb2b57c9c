"""Clustered intervals: clusters derived from the data, the design effect and the crossing
factor against known values, and coverage by fixed-seed simulation of clustered tasks."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pytest_bfcl.dataset.clusters import clusters_of
from pytest_bfcl.scores.board import ScoreBoard
from pytest_bfcl.scores.clustered import crossing_inflation
from pytest_bfcl.scores.intervals import design_effect, mean_interval

MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param")
MULTI_TURN += ("multi_turn_long_context",)


def test_clusters_derived_from_the_data(dataset):
    live = clusters_of(("live_irrelevance", e) for e in dataset.entries("live_irrelevance"))
    sizes = Counter(live.values())
    assert len(live) == 884 and len(sizes) == 399 and max(sizes.values()) == 91
    conversations = clusters_of((c, e) for c in MULTI_TURN for e in dataset.entries(c))
    by_key = Counter(conversations.values())
    assert len(conversations) == 800 and len(by_key) == 208
    # the same conversation, posed in the four categories under the same index (190 of 200)
    shared = sum(len({conversations[f"{c}_{i}"] for c in MULTI_TURN}) == 1 for i in range(200))
    assert shared == 190
    simple = clusters_of(("simple_python", e) for e in dataset.entries("simple_python"))
    assert len(set(simple.values())) == 400  # each its own function
    memory = clusters_of(("memory_kv", e) for e in dataset.entries("memory_kv"))
    assert len(set(memory.values())) == len(memory)  # a shared toolkit is no cluster


def test_design_effect_known_values():
    rates = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    assert design_effect(rates, None) == 1.0
    assert design_effect(rates, [str(i) for i in range(6)]) == pytest.approx(1.0)
    assert design_effect(rates, ["a"] * 6) == 6.0  # one unit of evidence
    # every entry twice in its cluster: twice the variance (n/(n-1) corrections aside)
    doubled = [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0] * 5
    keys = [str(i // 2) for i in range(len(doubled))]
    assert design_effect(doubled, keys) == pytest.approx(2.0 * 39 / 40 * 20 / 19)
    assert design_effect([1.0] * 5, ["a"] * 5) == 1.0  # nothing varies


def test_crossing_factor_of_a_cluster_posed_in_two_categories():
    rng = random.Random(1)
    rates = [float(rng.random() < 0.6) for _ in range(100)]
    entries = {
        "a": [(str(i), r) for i, r in enumerate(rates)],
        "b": [(str(i), r) for i, r in enumerate(rates)],  # the same conversations, same results
    }
    assert crossing_inflation({"a": 0.5, "b": 0.5}, entries) == pytest.approx(2 * 199 / 198)
    apart = {"a": entries["a"], "b": [(f"b{i}", r) for i, r in entries["b"]]}
    assert crossing_inflation({"a": 0.5, "b": 0.5}, apart) == pytest.approx(1.0)


def _clustered_population(rng: random.Random, clusters: int, size: int):
    """Clusters of tasks like one another: a cluster's chance uniform in 0-1, each task's
    verdict a draw from it (the mean chance of the population is 0.5)."""
    rates, keys = [], []
    for c in range(clusters):
        chance = rng.random()
        for _ in range(size):
            rates.append(float(rng.random() < chance))
            keys.append(str(c))
    return rates, keys


@pytest.mark.parametrize("size", [4, 10])
def test_clustered_intervals_cover_95_percent_where_plain_ones_do_not(size):
    rng = random.Random(f"clusters:{size}")
    reps, covered, plain = 500, 0, 0
    for _ in range(reps):
        rates, keys = _clustered_population(rng, 60, size)
        low, high = mean_interval(rates, 1, clusters=keys)
        covered += low <= 0.5 <= high
        low, high = mean_interval(rates, 1)
        plain += low <= 0.5 <= high
    assert 0.92 <= covered / reps <= 0.98
    assert plain / reps < 0.88  # reading a cluster's tasks as independent is overconfident


def test_score_board_widens_category_and_group_intervals_by_clusters():
    def board(with_clusters: bool) -> ScoreBoard:
        made = ScoreBoard()
        rng = random.Random(5)
        for category in MULTI_TURN:
            for i in range(200):
                chance = 0.2 if i % 40 < 20 else 0.8  # conversations 0-19 hard, 20-39 easy
                made.add_verdict(f"{category}_{i}", category, rng.random() < chance)
        if with_clusters:
            made.clusters = {
                f"{c}_{i}": f"conversation:{i % 40}" for c in MULTI_TURN for i in range(200)
            }
        return made

    def width(interval) -> float:
        return interval[1] - interval[0]

    plain, clustered = board(False).scores(), board(True).scores()
    base = "multi_turn_base"
    assert width(clustered.categories[base].ci95) > 1.5 * width(plain.categories[base].ci95)
    group_plain = width(plain.groups["multi_turn"].ci95)
    assert width(clustered.groups["multi_turn"].ci95) > 2 * group_plain
