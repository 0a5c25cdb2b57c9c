"""``python -m pytest_bfcl.compare BEFORE AFTER``: two stored runs compared as the gate would,
without running a model: its table, the changed entries with both answers, its exit status,
the HTML page; bad inputs are one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from gate_scenario import WRONG, ids
from not_files import not_a_file, unchanged

from pytest_bfcl.compare import main
from pytest_bfcl.gate import baseline_data, signed


@pytest.fixture
def runs(gate_env, tmp_path):
    """The scenario's baseline, and a later run of it saved as a baseline: 0..19 still fail,
    30..59 regress, and 5 is fixed."""
    run, before = gate_env
    after = tmp_path / "after.json"
    wrong = (ids(range(20)) - ids([5])) | ids(range(30, 60))
    result = run(wrong, f"--bfcl-save-baseline={after}", name="after")
    assert "BFCL gate: FAILED" in result.stdout.str()
    return before, after


def test_a_significant_drop_exits_1_with_the_gate_table_and_both_answers(runs, capsys):
    before, after = runs
    assert main([str(before), str(after), "--show", "3"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) <= 150
    assert "compared on the 400 entries both runs scored (before alone: 0, after alone: 0)" in out
    assert re.search(r"^simple_python +95\.00% +87\.75% +-7\.25 .* FAILED$", out, re.M)
    assert "Holm over 1 comparison (" in out  # the gate's own family-wise control
    assert "worse now: 30" in lines and "better now: 1" in lines
    at = lines.index("simple_python_30 [simple_python]")
    assert "kinematics_final_velocity_from_distance" in lines[at + 1]
    assert lines[at + 1].startswith("  baseline: ") and lines[at + 2] == f"  now:      {WRONG}"
    assert "... and 27 more (--show N; all in --html)" in lines
    at = lines.index("simple_python_5 [simple_python]")
    assert lines[at + 1] == f"  baseline: {WRONG}" and "solve_quadratic" in lines[at + 2]
    assert lines[-1] == "compare: FAILED"


def test_a_run_compared_with_itself_passes(runs, capsys):
    _, after = runs
    assert main([str(after), str(after)]) == 0
    out = capsys.readouterr().out
    assert "worse now" not in out and out.splitlines()[-1] == "compare: passed"


def test_the_gate_options_apply(runs, capsys):
    before, after = runs
    assert main([str(before), str(after), "--gate", "off"]) == 0
    assert main([str(before), str(after), "--min-drop", "10"]) == 0
    capsys.readouterr()


def test_html_writes_the_plugins_page_with_both_answers(runs, tmp_path, capsys):
    before, after = runs
    page = tmp_path / "compare.html"
    assert main([str(before), str(after), "--html", str(page)]) == 1
    text = page.read_text()
    assert "<html" in text and "simple_python_30" in text
    assert "answer_diff" in text and "kinematics_final_velocity_from_distance" in text
    assert "compared with" in text and "replay:base" in text  # the earlier run, in the header
    capsys.readouterr()


def test_runs_that_do_not_fit_are_refused_in_one_line(runs, tmp_path, capsys):
    before, after = runs
    data = json.loads(after.read_text())
    data["metadata"]["scoring_rules"] = 999
    data["metadata"]["mode"] = "prompt"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    assert main([str(before), str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("compare: these runs cannot be compared: ")
    assert "scoring rules differ" in err and "mode differs" in err


@pytest.mark.parametrize(
    "content, said",
    [
        ("{}", "is not a pytest-bfcl baseline"),
        ("not json", "is not JSON"),
        (None, "cannot read baseline"),
    ],
)
def test_bad_inputs_are_one_line(runs, tmp_path, capsys, content, said):
    before, _ = runs
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    assert main([str(before), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and said in err and str(bad) in err


def test_a_json_report_or_a_results_directory_says_what_to_give(runs, tmp_path, capsys):
    before, _ = runs
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"overall": {}, "categories": {}, "gate": None}))
    assert main([str(before), str(report)]) == 2
    assert "is a JSON report (--bfcl-report)" in capsys.readouterr().err
    assert main([str(tmp_path), str(before)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and "--bfcl-save-baseline" in err


def test_no_common_entry_is_refused(tmp_path, capsys):
    meta = {"model": "m", "mode": "fc", "categories": ["simple_python"], "dataset": {}}
    paths = []
    for n, entry in enumerate(("simple_python_0", "simple_python_1")):
        paths.append(tmp_path / f"{n}.json")
        paths[-1].write_text(json.dumps(baseline_data({entry: True}, meta, {})))
    assert main([str(p) for p in paths]) == 2
    assert "no entry in common" in capsys.readouterr().err


def test_signed_runs_are_checked_with_the_key(tmp_path, monkeypatch, capsys):
    meta = {"model": "m", "mode": "fc", "categories": ["simple_python"], "dataset": {}}
    key = "k" * 32
    monkeypatch.setenv("BFCL_KEY", key)
    signed_path, unsigned_path = tmp_path / "s.json", tmp_path / "u.json"
    data = baseline_data({"simple_python_0": True}, meta, {})
    signed_path.write_text(json.dumps(signed(data, key.encode())))
    unsigned_path.write_text(json.dumps(data))
    assert main([str(signed_path), str(signed_path), "--key-env", "BFCL_KEY"]) == 0
    assert main([str(signed_path), str(unsigned_path), "--key-env", "BFCL_KEY"]) == 2
    assert "it is not signed" in capsys.readouterr().err
    monkeypatch.delenv("BFCL_KEY")
    assert main([str(signed_path), str(signed_path), "--key-env", "BFCL_KEY"]) == 2
    assert "compare: --key-env names $BFCL_KEY, which is not set" in capsys.readouterr().err


def test_runs_as_a_module(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pytest_bfcl.compare", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and "BEFORE" in result.stdout.upper()


def test_many_categories_that_dropped_still_fit_in_150_lines(tmp_path, capsys):
    from pytest_bfcl.dataset.categories import expand_categories

    names = list(expand_categories(["single_turn", "multi_turn"]))
    meta = {"model": "m", "mode": "fc", "categories": names, "dataset": {}}
    before = {f"{name}_{n}": True for name in names for n in range(60)}
    after = {i: not i.endswith(("_1", "_2", "_3", "_4", "_5", "_6", "_7")) for i in before}
    paths = []
    for label, verdicts in (("before", before), ("after", after)):
        data = baseline_data(
            verdicts, {**meta, "run_id": label}, {}, answers=dict.fromkeys(verdicts, "x")
        )
        paths.append(tmp_path / f"{label}.json")
        paths[-1].write_text(json.dumps(data))
    assert main([str(p) for p in paths]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= 150 and lines[-1] == "compare: FAILED"
    worse = next(line for line in lines if line.startswith("worse now: "))
    assert int(worse.split(": ")[1]) > 100  # all but a few known ground-truth errors
    assert any(line.startswith("... and ") for line in lines)


@pytest.mark.parametrize(
    "option, value", [("--min-drop", "nan"), ("--min-drop", "-1"), ("--show", "-1")]
)
def test_gate_options_out_of_range_are_refused(runs, capsys, option, value):
    before, after = runs
    with pytest.raises(SystemExit) as exit_:
        main([str(before), str(after), option, value])
    assert exit_.value.code == 2 and f"argument {option}: {value} is not" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["a_directory", "a_file/below"])
def test_an_unwritable_html_path_is_one_line_after_the_comparison(runs, tmp_path, capsys, where):
    before, after = runs
    (tmp_path / "a_directory").mkdir()
    (tmp_path / "a_file").write_text("")
    # the drop is the status: a script reading 1 as "a drop" is not told otherwise
    assert main([str(before), str(after), "--html", str(tmp_path / where)]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "compare: FAILED"  # the comparison is not lost
    err = err.strip()
    assert "\n" not in err and err.startswith(f"compare: cannot write the HTML report {tmp_path}")
    assert ("it is a directory" in err) == (where == "a_directory") and "Errno" not in err


def test_a_baseline_of_a_model_that_sends_no_requests_says_so_not_none(runs, tmp_path, capsys):
    before, after = runs
    data = json.loads(after.read_text())
    data["metadata"]["temperature"] = 0.001  # a served model's run against the oracle's
    served = tmp_path / "served.json"
    served.write_text(json.dumps(data))
    assert json.loads(before.read_text())["metadata"]["temperature"] is None
    assert main([str(before), str(served)]) == 2
    err = capsys.readouterr().err
    assert "temperature differs: baseline none (a model that asks no endpoint" in err
    assert "None" not in err and "this run 0.001" in err


def test_html_over_a_compared_run_is_refused_and_the_run_kept(runs, capsys):
    before, after = runs
    kept = after.read_bytes()
    assert main([str(before), str(after), "--html", str(after)]) == 2
    assert "is one of the runs compared" in capsys.readouterr().err
    assert after.read_bytes() == kept


@pytest.mark.parametrize("kind", ["device", "folder", "link"])
def test_compare_html_never_replaces_what_is_no_file(runs, tmp_path, kind, capsys):
    """A device (/dev/null as root), a folder or a link at --html stays as it was."""
    target = not_a_file(tmp_path, kind)
    # the runs compared hold a drop: its status stands although the page is refused
    assert main([*map(str, runs), "--html", str(target)]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"cannot write the HTML report {target}: it is" in err
    assert unchanged(target, kind)
