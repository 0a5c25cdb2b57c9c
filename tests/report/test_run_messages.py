"""What a run says when it cannot give what was asked: an overall the selection cannot compute,
an incomplete run, an entry to explain that is not in the run, every entry deselected. Each is
said in the terminal, where a CI log is read, not only in the JSON report."""

from __future__ import annotations

import re

import pytest


@pytest.fixture
def common(data_source) -> list[str]:
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider", "-p", "no:randomly"]


def _overall_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("Overall (V4)")]
    return line


def test_a_perfect_run_of_a_few_categories_does_not_headline_a_zero_filled_overall(
    pytester, common, tmp_path
):
    html = tmp_path / "r.html"
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                                f"--bfcl-html={html}", *common)  # fmt: skip
    assert result.ret == 0
    line = _overall_line(result.stdout.str())
    # the first figure on the line is not a score: "n/a", then why, then the formula's figure
    assert re.match(
        r"Overall \(V4\) +n/a  not computed: \d+ categories of the overall not run", line
    )
    assert "with them as 0 the leaderboard formula gives" in line
    header = html.read_text()[:20000]
    assert re.search(r"overall: <b>not computed \(\d+ of its categories not run; ", header)


def test_an_incomplete_gate_names_what_is_missing_without_a_wrong_count(pytester, common, tmp_path):
    baseline = tmp_path / "b.json"
    categories = "--bfcl-category=live_parallel,live_relevance,live_parallel_multiple"
    saved = pytester.runpytest("--bfcl-model=oracle", categories,
                               f"--bfcl-save-baseline={baseline}", *common)  # fmt: skip
    assert saved.ret == 0
    # the settings leave out two of the baseline's categories (a narrowing on the command
    # line, -k say, would be compared as selected)
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                                f"--bfcl-baseline={baseline}", *common)  # fmt: skip
    assert result.ret == 1
    out = result.stdout.str()
    assert "problems listed above" not in out
    assert "incomplete: entries not scored, listed above under the scores; FAILED" in out
    assert "live_relevance: 16 of 16 not scored" in out
    assert "live_parallel_multiple: 24 of 24 not scored" in out


def test_every_entry_deselected_says_so_and_gates_nothing(pytester, common, tmp_path):
    """Deselecting every entry (-m "not bfcl": the project's own tests alone) narrows the
    selection to nothing: nothing to compare, nothing incomplete."""
    baseline = tmp_path / "b.json"
    pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                       f"--bfcl-save-baseline={baseline}", *common)  # fmt: skip
    pytester.makepyfile(test_unit="def test_unit():\n    assert True\n")
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                                f"--bfcl-baseline={baseline}", "-m", "not bfcl", *common)  # fmt: skip
    assert result.ret == 0
    out = result.stdout.str()
    assert "no BFCL entry ran: all 16 collected were deselected (-m, -k, --deselect)" in out
    assert "BFCL gate: FAILED" not in out and "incomplete" not in out


def test_explaining_an_entry_the_run_does_not_have_is_refused_before_it_starts(pytester, common):
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                                "--bfcl-explain=live_paralel_0-0-0", *common)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert (
        "--bfcl-explain=live_paralel_0-0-0: no entry of the selected categories has this id" in err
    )
    assert "did you mean live_parallel_0-0-0" in err
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                                "--bfcl-sample=1", "--bfcl-seed=0",
                                "--bfcl-explain=live_parallel_0-0-0",
                                "--bfcl-explain=live_parallel_1-0-1", *common)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "this run leaves it out (the sample" in result.stderr.str()


def test_explaining_an_entry_that_passed_says_so(pytester, common):
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                                "--bfcl-explain=live_parallel_0-0-0", *common)  # fmt: skip
    assert result.ret == 0
    assert "live_parallel_0-0-0: no failure to explain (it passed, or did not run)" in (
        result.stdout.str()
    )
