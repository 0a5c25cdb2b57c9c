"""The HTML report's side-by-side view of a changed entry: the baseline's answer and this run's,
what only one of them has marked."""

from __future__ import annotations

import pytest
from gate_scenario import WRONG, ids
from test_html_report import _errors, _open_entry, browser_only, open_report, start_browser

from pytest_bfcl.report.html.answer_diff import answer_fields, marked_difference
from pytest_bfcl.report.html.entries import HtmlEntries
from pytest_bfcl.report.html.facts import EntryRecord
from pytest_bfcl.report.html.page import write_html
from pytest_bfcl.scores.board import ScoreBoard


@pytest.mark.parametrize(
    "before, after",
    [
        ('[{"f": "{\\"a\\": 1}"}]', '[{"f": "{\\"a\\": 2}"}]'),
        ("[get(city='Paris')]", "I cannot help with that."),
        ("", "text"),
        ("same", "same"),
    ],
)
def test_the_marked_runs_spell_both_answers(before, after):
    runs = marked_difference(before, after)
    assert "".join(t for op, t in runs if op in "=-") == before
    assert "".join(t for op, t in runs if op in "=+") == after
    if before == after:
        assert all(op == "=" for op, _ in runs)


def test_only_what_differs_is_marked():
    runs = marked_difference('[{"f": "{\\"a\\": 1}"}]', '[{"f": "{\\"a\\": 2}"}]')
    assert [r for r in runs if r[0] != "="] == [["-", "1"], ["+", "2"]]


def test_an_answer_missing_on_one_side_has_no_marks():
    assert answer_fields(None, "now") == {
        "baseline_answer": None,
        "answer": "now",
        "answer_diff": None,
    }
    assert answer_fields(None, None) == {}


def test_a_runs_page_carries_both_answers_of_a_regression(gate_env, tmp_path):
    run, _ = gate_env
    page = tmp_path / "report.html"
    run(ids(range(20)) | ids([30]), f"--bfcl-html={page}")
    text = page.read_text()
    assert '"answer_diff":' in text and "kinematics_final_velocity_from_distance" in text
    assert text.count('"answer_diff":') == 1  # the one entry that changed


@browser_only
def test_the_two_answers_show_side_by_side_with_the_differences_marked(tmp_path):
    before, after = "[get_weather(city='Paris')]", WRONG
    records = [
        EntryRecord(
            id="simple_python_0",
            category="simple_python",
            outcome="failed",
            valid=False,
            baseline_valid=True,
            regression=True,
            output=after,
            **answer_fields(before, after),  # type: ignore[arg-type]
        ),
        EntryRecord(
            id="simple_python_1",
            category="simple_python",
            outcome="failed",
            valid=False,
            baseline_valid=True,
            regression=True,
            answer=after,
        ),
    ]
    board = ScoreBoard()
    for record in records:
        board.add_verdict(record.id, record.category, False)
    entries = HtmlEntries()
    for record in records:
        entries.add_record(record)
    path = tmp_path / "page.html"
    write_html(path, entries, board.scores(), None, {"model": "m"})
    driver = start_browser(tmp_path / "profile")
    try:
        open_report(driver, path)
        driver.find_element("css selector", 'button.cat[data-category="simple_python"]').click()
        detail = _open_entry(driver, "simple_python_0")
        sides = detail.find_elements("css selector", ".answers-beside pre.answer")
        assert [s.text for s in sides] == [before, after]
        removed = detail.find_elements("css selector", "mark.removed")
        added = detail.find_elements("css selector", "mark.added")
        assert removed and added
        assert "".join(m.text for m in removed) in before
        assert "".join(m.text for m in added) in after
        detail = _open_entry(driver, "simple_python_1")
        sides = detail.find_elements("css selector", ".answers-beside pre.answer")
        assert sides[0].text == "(none: the baseline holds no answer for it)"
        assert sides[1].text == after
        assert not _errors(driver)
    finally:
        driver.quit()
