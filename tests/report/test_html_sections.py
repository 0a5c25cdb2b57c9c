"""The HTML report's static sections, readable before any script runs: how a sequential run
stopped (stage, entries and queries asked, why) and the entries worse than the baseline with
both answers side by side, the model's text escaped."""

from __future__ import annotations

import json
import re

from gate_scenario import WRONG, ids

from pytest_bfcl.report.html.sections import SHOWN_CHANGES, changes_html, sequential_html

FLAKY = "oracle:flaky=0.1"


def _section(page: str, section_id: str) -> str:
    found = re.search(rf'<section id="{section_id}".*?</section>', page, re.S)
    assert found is not None, f"no #{section_id} section"
    return found.group(0)


def test_a_sequential_run_that_stopped_early_says_so_on_the_page(pytester, data_source, tmp_path):
    common = [
        f"--bfcl-data={data_source.data_dir}", "--bfcl-category=simple_python,multiple",
        "-p", "no:cacheprovider", "--bfcl-list-failures=0",
    ]  # fmt: skip
    baseline, html, report = tmp_path / "b.json", tmp_path / "r.html", tmp_path / "r.json"
    first = pytester.runpytest(
        f"--bfcl-model={FLAKY},seed=1", f"--bfcl-save-baseline={baseline}", *common
    )
    assert first.ret == 0
    # the stages are drawn from --bfcl-seed (else from the commit checked out: another draw
    # on every commit), so that which of these runs stops early is the same on every commit
    for seed in (2, 3, 4):
        result = pytester.runpytest(
            f"--bfcl-model={FLAKY},seed={seed}", f"--bfcl-baseline={baseline}",
            "--bfcl-sequential", f"--bfcl-seed={seed}", f"--bfcl-html={html}",
            f"--bfcl-report={report}", *common,
        )  # fmt: skip
        assert result.ret == 0, result.stdout.str()[-2000:]
        record = json.loads(report.read_text())["sequential"]
        if record["reached"] < 3:
            break
    assert record["reached"] < 3, "no seed stopped early"
    section = _section(html.read_text(), "sequential")
    asked, full = record["asked"], record["full"]
    assert "stopped early" in section and f"{record['reached']} of 3" in section
    assert f"{asked['entries']:,} of {full['entries']:,}" in section
    assert f"{asked['queries']:,} of {full['queries']:,}" in section
    assert record["reason"].split(":")[0] in section.replace("&#x27;", "'")
    # above the score table, beside the verdict
    page = html.read_text()
    assert page.index('id="sequential"') < page.index("<table", page.index('id="sequential"') + 1)


def test_a_run_that_is_not_sequential_has_no_such_section():
    assert sequential_html(None) == "" and changes_html(None, set()) == ""
    last = {"stages": [0.1, 0.3, 1.0], "reached": 3, "asked": {"entries": 9, "queries": 9},
            "full": {"entries": 9, "queries": 9}, "share_of_queries": 1.0, "reason": "all"}  # fmt: skip
    assert "asked every stage" in sequential_html(last)


def test_regressions_are_side_by_side_on_the_page_without_opening_them(gate_env, tmp_path):
    run, _ = gate_env
    html = tmp_path / "r.html"
    result = run(ids(range(20)) | ids(range(30, 60)), f"--bfcl-html={html}")
    assert "BFCL gate: FAILED" in result.stdout.str()
    section = _section(html.read_text(), "changes")
    assert "30 entries" in section
    shown = re.findall(r'<div class="change" data-id="([^"]+)">', section)
    assert len(shown) == SHOWN_CHANGES and shown[0] == "simple_python_30"
    first = section.split('<div class="change"')[1]
    assert "REGRESSION" in first
    assert "kinematics_final_velocity_from_distance" in first  # the baseline's answer
    assert WRONG.split()[0] in first and 'class="added"' in first  # this run's, marked
    assert "10 more entries" in section


def test_the_models_text_in_the_section_is_escaped():
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    changes = {
        "note": None,
        "regressions": [
            {"id": "simple_python_1", "category": "simple_python", "baseline_answer": "ok",
             "answer": hostile, "no_baseline_answer": None},
            {"id": "simple_python_2", "category": "simple_python", "baseline_answer": None,
             "answer": "", "no_baseline_answer": "the baseline holds no answers"},
        ],
    }  # fmt: skip
    page = changes_html(changes, {"simple_python_2"})
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page
    # the failing one first; a missing and an empty answer each say so
    assert page.index("simple_python_2") < page.index("simple_python_1")
    assert "(none: the baseline holds no answers)" in page and "(empty answer" in page
