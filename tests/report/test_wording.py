"""The reports' wording: plurals, signed numbers, and lines kept to the promised width."""

from __future__ import annotations

from pytest_bfcl.wording import LINE_WIDTH, count, fit, fit_all, listed, signed


def test_counts_take_the_right_plural():
    assert count(1, "entry", "entries") == "1 entry"
    assert count(0, "entry", "entries") == "0 entries"
    assert count(1200, "error") == "1,200 errors"
    assert count(1, "search", "searches") == "1 search"


def test_signed_numbers_never_read_negative_zero():
    assert signed(-0.001) == "+0.00"
    assert signed(-0.0) == "+0.00"
    assert signed(-1.256) == "-1.26"
    assert signed(3) == "+3.00"
    assert signed(-0.04, 1) == "+0.0"


def test_long_lines_are_wrapped_to_the_width_and_short_ones_kept():
    assert fit("short") == ["short"]
    words = " ".join(f"word{i}" for i in range(200))
    lines = fit(words)
    assert len(lines) > 1 and all(len(line) <= LINE_WIDTH for line in lines)
    assert " ".join(part.strip() for part in lines) == words
    assert fit_all(["a\n" + "b " * 150]) == ["a", *fit("b " * 150)]


def test_id_lists_show_what_fits_and_count_the_rest():
    ids = [f"memory_rec_sum_{i}-notetaker-{i}" for i in range(20)]
    text = listed(ids, 120)
    assert len(text) <= 120 and text.endswith("more")
    shown = text.split(" and ")[0].split(", ")
    assert text.endswith(f" and {20 - len(shown)} more")
    assert listed(["a", "b"], 100) == "a, b"
