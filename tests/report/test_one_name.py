"""One name, one set of numbers: a group's name is never a category's (the benchmark's, or a
project's own), and every report gives a category its own score, p-value and counts, never
those of a group that contains it."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_bfcl.dataset.categories import CATEGORIES, DATASET_SIZES, category_of_id
from pytest_bfcl.dataset.custom import CustomCategory, add_custom_categories
from pytest_bfcl.dataset.groups import GROUPS, SCORE_NAMES
from pytest_bfcl.gate.decision import GateSettings, compare
from pytest_bfcl.report.html.tables import scores_html
from pytest_bfcl.report.junit.summary import summary_testcases
from pytest_bfcl.report.markdown import markdown_summary
from pytest_bfcl.report.render import gate_block
from pytest_bfcl.scores.board import ScoreBoard

# Every category the gate compares by entry id (format sensitivity's ids name a configuration),
# and a project's own.
SCORED = [name for name in DATASET_SIZES if name != "format_sensitivity"] + ["acme_tools"]


def test_no_group_or_overall_shares_a_category_name():
    categories = set(CATEGORIES) | set(DATASET_SIZES)
    assert "irrelevance" in categories  # the name that once named a group too
    assert not categories & SCORE_NAMES
    assert len({g.name for g in GROUPS}) == len(GROUPS)


@pytest.mark.parametrize("name", sorted(SCORE_NAMES))
def test_a_custom_category_cannot_take_a_group_name(tmp_path, name):
    questions = tmp_path / "q.json"
    questions.write_text("")
    custom = CustomCategory(name=name, questions=questions, kind="irrelevance")
    try:
        with pytest.raises(ValueError, match=re.escape(f"{name!r}")):
            add_custom_categories([custom])
    finally:
        from pytest_bfcl.dataset.custom import unregister_custom_categories

        unregister_custom_categories()


def _runs(seed: int) -> tuple[dict[str, bool], dict[str, bool]]:
    """Every category of the dataset, each with its own pass rates in two runs (so that a
    category's numbers differ from any group's that contains it)."""
    rng = random.Random(seed)
    before: dict[str, bool] = {}
    now: dict[str, bool] = {}
    for name in SCORED:
        size = rng.randint(6, 30)
        rate, drop = rng.uniform(0.5, 1.0), rng.uniform(0.0, 0.4)
        for i in range(size):
            entry_id = f"{name}_{i}"
            assert category_of_id(entry_id) == name
            before[entry_id] = rng.random() < rate
            now[entry_id] = before[entry_id] and rng.random() >= drop
    return now, before


def _gate_and_scores(seed: int = 7):
    now, before = _runs(seed)
    gate = compare(now, before, GateSettings())
    board = ScoreBoard()
    for entry_id, valid in now.items():
        board.add_verdict(entry_id, category_of_id(entry_id), valid)
    return gate, board.scores(), now


def test_a_category_comparison_prints_the_categorys_own_scores():
    gate, scores, _ = _gate_and_scores()
    categories = [c for c in gate.comparisons if c.kind == "category"]
    assert {c.name for c in categories} == set(SCORED)
    for c in categories:
        assert c.current_accuracy == pytest.approx(scores.categories[c.name].accuracy)
    groups = {c.name for c in gate.comparisons if c.kind == "group"}
    assert "irrelevance_detection" in groups


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_every_report_gives_each_category_its_own_numbers():
    gate, scores, _ = _gate_and_scores()
    categories = {c.name: c for c in gate.comparisons if c.kind == "category"}
    # the terminal's gate table
    rows = {line.split()[0]: line for line in gate_block(gate) if line[:1].isalpha()}
    for name, c in categories.items():
        fields = rows[name].split()
        assert fields[1] == f"{c.baseline_accuracy * 100:.2f}%"
        assert fields[2] == f"{c.current_accuracy * 100:.2f}%"
        assert fields[4] == f"{c.p_value:.3g}"
        assert int(fields[6]) == len(c.regressions)
    # the Markdown summary (GitHub's step summary)
    markdown = markdown_summary(scores, {"model": "m", "mode": "fc"}, gate)
    table = {
        _cells(line)[0].removesuffix(" :x:"): _cells(line)
        for line in markdown.splitlines()
        if line.startswith("| ") and not line.startswith("| category")
    }
    for name, c in categories.items():
        cells = table[name]
        assert cells[1] == f"{c.baseline_accuracy * 100:.2f}%"
        assert cells[4] == f"{c.p_value:.3g}" and cells[5] == str(len(c.regressions))
    # the junit summary testcases: one per category and one per compared group
    cases, failed = summary_testcases(scores, gate)
    by_name: dict[str, dict[str, str]] = {}
    for case in cases:
        name = case.get("name")
        assert name not in by_name  # one testcase per name
        by_name[name] = {p.get("name"): p.get("value") for p in case.iter("property")}
    for name, c in categories.items():
        props = by_name[name]
        assert props["bfcl_kind"] == "category"
        assert props["bfcl_p_value"] == f"{c.p_value:.6g}"
        assert props["bfcl_baseline_accuracy"] == f"{c.baseline_accuracy:.6f}"
        assert props["bfcl_regressions"] == str(len(c.regressions))
    for c in gate.comparisons:
        if c.kind != "category":
            assert by_name[c.name]["bfcl_kind"] == c.kind
            assert by_name[c.name]["bfcl_p_value"] == f"{c.p_value:.6g}"
    assert failed == sum(c.failed for c in gate.comparisons)
    # the HTML report's score table: a category's row shows its own p-value
    html = scores_html(scores, gate)
    for name, c in categories.items():
        row = re.search(rf'<tr data-category="{name}">(.*?)</tr>', html, re.S)
        assert row is not None, name
        assert f"{c.p_value:.3g}" in row.group(1)


def test_the_gate_json_and_junit_name_the_irrelevance_category_apart_from_its_group():
    """The case seen in a real run: the category's gate row, JSON comparison and junit
    testcase carried the group's numbers."""
    before = {f"irrelevance_{i}": True for i in range(40)}
    before |= {f"live_irrelevance_{i}-0-0": True for i in range(400)}
    now = dict(before) | {f"live_irrelevance_{i}-0-0": False for i in range(60)}
    now |= {"irrelevance_0": False}
    gate = compare(now, before, GateSettings())
    dumped = gate.model_dump(mode="json")["comparisons"]
    names = [(c["name"], c["kind"]) for c in dumped]
    assert len(set(n for n, _ in names)) == len(names)  # one name, one comparison
    category = next(c for c in dumped if c["name"] == "irrelevance")
    assert category["kind"] == "category"
    assert category["current_accuracy"] == pytest.approx(39 / 40)
    assert category["regressions"] == ["irrelevance_0"] and not category["failed"]
    group = next(c for c in dumped if c["name"] == "irrelevance_detection")
    assert group["failed"] and len(group["regressions"]) == 61
    board = ScoreBoard()
    for entry_id, valid in now.items():
        board.add_verdict(entry_id, category_of_id(entry_id), valid)
    cases, _ = summary_testcases(board.scores(), gate)
    case = next(c for c in cases if c.get("name") == "irrelevance")
    assert case.find("failure") is None
    text = ET.tostring(case, encoding="unicode")
    assert 'name="bfcl_regressions" value="1"' in text
