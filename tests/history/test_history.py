"""``python -m pytest_bfcl.history RUN...``: five stored runs become a table of every
category's and group's score per run and a self-contained page with a chart, the significant
changes between consecutive runs marked by the gate's own test; bad input is one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from pytest_bfcl.history import series
from pytest_bfcl.history.cli import main

CATEGORIES = "simple_python,multiple,irrelevance"
# main's five merges: unchanged, unchanged, a broken checkpoint, still broken, fixed
MODELS = ("", "", ",fail=0.08", ",fail=0.08", "")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_source):
    folder = tmp_path_factory.mktemp("history")
    paths = []
    for number, spoil in enumerate(MODELS, 1):
        path = folder / f"main-{number}.json"
        done = subprocess.run(
            [
                sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                f"--bfcl-model=oracle:flaky=0.02,seed={number}{spoil}",
                f"--bfcl-data={data_source.data_dir}", f"--bfcl-category={CATEGORIES}",
                f"--bfcl-save-baseline={path}", "--bfcl-list-failures=0",
            ],
            cwd=folder, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:]
        paths.append(path)
    return paths


def test_five_runs_make_a_table_and_a_page_with_a_chart(runs, tmp_path, capsys):
    page = tmp_path / "history.html"
    assert main([*map(str, runs), "--html", str(page)]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(line for line in out if line.startswith("score "))
    assert header.split()[1:] == ["#1", "#2", "#3", "#4", "#5"]
    table = {line.split()[0]: line.split()[1:] for line in out[out.index(header) + 1 :] if line}
    assert set(CATEGORIES.split(",")) <= set(table)
    simple = table["simple_python"]
    # the broken checkpoint's drop is marked where it landed, its fix where it was undone
    assert simple[2].endswith("v") and simple[4].endswith("^")
    assert not any(cell.endswith(("v", "^")) for cell in (simple[0], simple[1], simple[3]))
    assert any(s.startswith("  #2 -> #3 simple_python: ") and "significant drop" in s for s in out)
    assert any(s.startswith("  #4 -> #5 simple_python: ") and "significant gain" in s for s in out)
    html = page.read_text()
    assert "<svg" in html and html.count("<polyline") >= 1 and 'fill="#b42318"' in html
    assert "<script" not in html and not re.search(r"(src|href)=[\"']?https?:", html)
    assert "default-src 'none'" in html and "--bad-bg" in html  # the reports' stylesheet
    assert html.count('class="num drop"') >= 1 and html.count('class="num gain"') >= 1


def test_the_drops_are_the_gates_own_decisions(runs):
    from pytest_bfcl.compare import compare_runs, stored_run
    from pytest_bfcl.settings import GateSettings

    history = series.build_history(runs, GateSettings())
    gate, _ = compare_runs(stored_run(runs[1], None), stored_run(runs[2], None), GateSettings())
    failed = {(c.kind, c.name) for c in gate.comparisons if c.failed}
    drops = {tuple(c.key.split(":", 1)) for c in history.changes if c.to == 2}
    assert drops and drops <= failed
    assert all(c.direction == "drop" for c in history.changes if c.to == 2)
    # the p-values are the gate's, as compare prints them
    by_name = {(c.kind, c.name): c.p_value for c in gate.comparisons}
    for change in (c for c in history.changes if c.to == 2):
        assert change.p_value == by_name[tuple(change.key.split(":", 1))]


def test_bad_input_is_one_line(runs, tmp_path, capsys, monkeypatch):
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"overall": {}, "categories": {}, "gate": None}))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{" * 100_000)
    cases = {
        str(tmp_path / "missing.json"): "missing.json",
        str(tmp_path): "is a directory",
        str(report): "JSON report",
        str(garbage): "garbage.json",
    }
    for bad, said in cases.items():
        assert main([str(runs[0]), bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("history: ") and said in err, err
    monkeypatch.setattr(series, "MAX_RUNS", 3)
    assert main(list(map(str, runs))) == 2
    assert "5 runs given; at most 3" in capsys.readouterr().err
    assert main([str(runs[0]), "--html", str(runs[0])]) == 2
    assert "is one of the runs" in capsys.readouterr().err


def test_stamps_are_text_and_a_pair_the_gate_refuses_keeps_its_scores(runs, tmp_path, capsys):
    data = json.loads(runs[1].read_text())
    data["metadata"]["model"] = "<script>alert(1)</script>\x1b[31mred\u202e"
    data["metadata"]["temperature"] = 0.7  # not comparable with the run before
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    page = tmp_path / "h.html"
    assert main([str(runs[0]), str(edited), str(runs[2]), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "#1 -> #2 not compared: these runs cannot be compared: temperature differs" in out
    html = page.read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html
