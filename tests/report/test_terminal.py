"""The terminal at any scale: a line per failure at the end, pytest's own sections when asked
for, progress lines that never break a row, every file written named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_bfcl.testing.result_files import write_oracle_results


def _all_wrong(root: Path, dataset, category: str = "simple_python") -> Path:
    spoil = {e.id: "no" for e in dataset.entries(category)}
    write_oracle_results(root, dataset, category, spoil)
    return root


@pytest.fixture
def common(data_source) -> list[str]:
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider"]


def test_many_failures_stay_a_few_lines_each(pytester, dataset, tmp_path, common):
    root = _all_wrong(tmp_path / "r", dataset)
    result = pytester.runpytest(f"--bfcl-model=replay:{root}", "--bfcl-category=simple_python",
                                "-rN", *common)  # fmt: skip
    result.assert_outcomes(failed=400)
    out = result.stdout.str()
    assert "= FAILURES =" not in out  # no section per entry
    assert "BFCL failures: 400" in out
    assert out.count(" [simple_python] ast_decoder:decoder_failed: ") == 20
    assert "... and 380 more" in out
    assert len(out.splitlines()) < 100
    assert max(len(line) for line in out.splitlines()) < 500


@pytest.mark.parametrize("flag", ["-v", "--tb=short"])
def test_pytest_sections_come_back_when_asked_for(pytester, dataset, tmp_path, common, flag):
    root = _all_wrong(tmp_path / "r", dataset, "simple_javascript")
    result = pytester.runpytest(f"--bfcl-model=replay:{root}", "--bfcl-category=simple_javascript",
                                flag, *common)  # fmt: skip
    out = result.stdout.str()
    assert "= FAILURES =" in out
    assert "BFCL simple_javascript_3 [simple_javascript] failed" in out
    assert '  output:   "no"' in out


def test_explain_prints_one_entry_in_full(pytester, dataset, tmp_path, common):
    root = _all_wrong(tmp_path / "r", dataset, "simple_javascript")
    result = pytester.runpytest(f"--bfcl-model=replay:{root}", "--bfcl-category=simple_javascript",
                                "--bfcl-explain=simple_javascript_7", *common)  # fmt: skip
    out = result.stdout.str()
    assert "= FAILURES =" not in out
    assert out.count('  output:   "no"') == 1
    assert "BFCL simple_javascript_7 [simple_javascript] failed" in out


def test_progress_lines_stand_on_their_own(pytester, common):
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=simple_java,live_parallel",
                                "--bfcl-progress=0.001", *common)  # fmt: skip
    lines = result.stdout.lines
    progress = [line for line in lines if "generated," in line]
    assert progress, "no progress line at all"
    assert all(line.startswith("bfcl: ") for line in progress)
    headers = [line for line in lines if line.startswith("bfcl/simple_java ")]
    assert len(headers) == 1  # the category's row header is not printed again


def test_files_written_are_named(pytester, tmp_path, common):
    report, chart = tmp_path / "out" / "r.json", tmp_path / "out" / "c.svg"
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_parallel",
                                f"--bfcl-report={report}", f"--bfcl-chart={chart}", *common)  # fmt: skip
    out = result.stdout.str()
    assert "BFCL files written" in out
    assert f"JSON report  {report}" in out and f"chart        {chart}" in out


def test_on_ci_each_failure_is_still_one_line(pytester, dataset, tmp_path, common, monkeypatch):
    monkeypatch.setenv("CI", "true")  # pytest stops shortening its line per failure on CI
    root = _all_wrong(tmp_path / "r", dataset, "simple_javascript")
    junit = tmp_path / "junit.xml"
    result = pytester.runpytest(f"--bfcl-model=replay:{root}", "--bfcl-category=simple_javascript",
                                f"--junitxml={junit}", *common)  # fmt: skip
    out = result.stdout.str()
    assert "  output:" not in out
    assert out.count("FAILED bfcl/simple_javascript::") == 50
    assert junit.read_text().count('output:   "no"') == 50  # the full explanation is kept there


def test_progress_lines_give_the_rate_and_what_is_left():
    from pytest_bfcl.run.scheduler import duration, progress_line

    line = progress_line(120, 4441, 2, 40.0, in_flight=8)
    assert line == (
        "bfcl: 120/4441 generated, 8 in flight, 2 failed, 3.0 entries/s, about 24m 00s left"
    )
    assert progress_line(10, 10, 0, 5.0) == "bfcl: 10/10 generated, 0 failed, 2.0 entries/s"
    assert progress_line(0, 10, 0, 0.0) == "bfcl: 0/10 generated, 0 failed, 0.0 entries/s"
    assert progress_line(9, 10, 0, 1.0).endswith(", 9.0 entries/s, under 1s left")
    assert [duration(s) for s in (45, 200, 3725)] == ["45s", "3m 20s", "1h 02m"]


def test_the_xdist_controller_counts_entries_not_samples(pytester, common):
    pytest.importorskip("xdist")
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=simple_python",
                                "-n", "2", "--bfcl-samples=2", "--bfcl-progress=0.001", *common)  # fmt: skip
    progress = [line for line in result.stdout.lines if line.startswith("bfcl: ")]
    assert progress and all("/400 generated, " in line for line in progress)


def test_the_xdist_controller_prints_progress_lines(pytester, common):
    pytest.importorskip("xdist")
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=simple_python,multiple",
                                "-n", "2", "--bfcl-progress=0.001", *common)  # fmt: skip
    result.assert_outcomes(passed=600)
    progress = [line for line in result.stdout.lines if line.startswith("bfcl: ")]
    assert progress, "no progress line under xdist"
    assert all("/600 generated, " in line and "entries/s" in line for line in progress)
    counts = [int(line.split()[1].split("/")[0]) for line in progress]
    assert counts == sorted(counts) and counts[-1] <= 600
