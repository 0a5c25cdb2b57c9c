"""Aggregation into the leaderboard's group scores and the V4 overall."""

import pytest

from pytest_bfcl.dataset.categories import ALL_SCORING, DATASET_SIZES
from pytest_bfcl.scores.board import ScoreBoard


def board_with(accuracy: dict[str, float]) -> ScoreBoard:
    board = ScoreBoard()
    for category, acc in accuracy.items():
        size = DATASET_SIZES[category]
        correct = round(acc * size)
        for i in range(size):
            board.add_verdict(f"{category}_{i}", category, i < correct)
    return board


def test_full_run_weights():
    acc = {c: 1.0 for c in ALL_SCORING}
    acc.update(simple_java=0.5, live_multiple=0.0, memory_kv=0.0, web_search_base=0.5)
    scores = board_with(acc).scores()
    assert not scores.partial
    g = scores.groups
    assert g["simple"].accuracy == pytest.approx((1 + 0.5 + 1) / 3)
    assert g["non_live"].accuracy == pytest.approx((g["simple"].accuracy + 3) / 4)
    live_counts = {
        "live_simple": 258,
        "live_multiple": 1053,
        "live_parallel": 16,
        "live_parallel_multiple": 24,
    }
    assert g["live"].accuracy == pytest.approx((258 + 16 + 24) / sum(live_counts.values()))
    assert g["memory"].accuracy == pytest.approx(2 / 3)
    assert g["web_search"].accuracy == pytest.approx(0.75)
    assert g["agentic"].accuracy == pytest.approx((2 / 3 + 0.75) / 2)
    expected = (
        0.1 * g["non_live"].accuracy
        + 0.1 * g["live"].accuracy
        + 0.1 * 1.0
        + 0.3 * 1.0
        + 0.4 * g["agentic"].accuracy
    )
    assert scores.overall.accuracy == pytest.approx(expected)


def test_missing_categories_are_not_run_never_zero():
    scores = board_with(
        {"simple_python": 1.0, "irrelevance": 1.0, "live_irrelevance": 0.5}
    ).scores()
    assert scores.partial
    assert scores.groups["non_live"].accuracy is None
    assert "simple_java" in scores.groups["non_live"].missing
    assert scores.groups["irrelevance_detection"].accuracy == pytest.approx(0.75)
    assert scores.overall.accuracy is None
    # The leaderboard's own formula counts missing categories as 0: kept for comparison.
    assert scores.overall.reference_accuracy == pytest.approx(0.1 * (1 / 3) / 4 + 0.1 * 0.75)


def test_skipped_web_search_gets_the_overall_with_agentic_from_memory():
    acc = {c: 1.0 for c in ALL_SCORING if not c.startswith("web_search")}
    acc.update(memory_kv=0.5, memory_vector=0.5, memory_rec_sum=0.5)
    board = board_with(acc)
    for _ in range(100):
        board.add_skip("web_search_base", "web search is off")
    scores = board.scores()
    assert scores.partial and scores.overall.accuracy is None
    memory = scores.groups["memory"].accuracy
    assert memory == pytest.approx(78 / 155)  # 0.5 of 155, rounded to whole entries
    assert scores.overall_without_web_search == pytest.approx(0.1 + 0.1 + 0.1 + 0.3 + 0.4 * memory)
    assert "overall_without_web_search" not in scores.groups
    assert scores.categories["web_search_base"].skip_reasons == {"web search is off": 100}
    # with anything else missing too, there is no such figure
    del acc["multiple"]
    assert board_with(acc).scores().overall_without_web_search is None
    # and a complete run does not need it
    full = board_with({c: 1.0 for c in ALL_SCORING}).scores()
    assert full.overall_without_web_search is None


def test_partially_run_category_is_incomplete():
    board = ScoreBoard()
    board.add_verdict("simple_python_0", "simple_python", True)
    board.add_skip("simple_python")
    board.add_error("simple_python")
    cat = board.scores().categories["simple_python"]
    assert (cat.correct, cat.total, cat.skipped, cat.errors, cat.complete) == (1, 1, 1, 1, False)


def test_format_sensitivity_spread():
    board = ScoreBoard()
    for i, (config, valid) in enumerate([("a", True), ("a", True), ("b", True), ("b", False)]):
        board.add_verdict(
            f"format_sensitivity_{i}:{config}:simple_python_0", "format_sensitivity", valid
        )
    fs = board.scores().format_sensitivity
    assert fs is not None
    assert fs.configs["a"].accuracy == 1.0 and fs.configs["b"].accuracy == 0.5
    assert fs.max_delta == pytest.approx(0.5)
    assert fs.std == pytest.approx(0.3535533906)
