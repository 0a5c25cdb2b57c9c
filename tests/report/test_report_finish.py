"""The end of a run without pytest: sampled scores with intervals, the closing sections, the
failure list, item properties, CSV N/A for groups that did not run."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.gate.decision import GateSettings, compare
from pytest_bfcl.report.csv_tables import csv_tables
from pytest_bfcl.report.finish import (
    FailureNote,
    RunOutcome,
    closing_sections,
    failure_lines,
    finish_run,
)
from pytest_bfcl.report.properties import ItemProperties
from pytest_bfcl.report.render import gate_block, score_table
from pytest_bfcl.scores.board import ScoreBoard
from pytest_bfcl.scores.intervals import mean_interval, mean_variance
from pytest_bfcl.settings import Settings


def _rates(correct: int, total: int) -> list[float]:
    return [1.0] * correct + [0.0] * (total - correct)


def test_wilson_interval_known_values():
    low, high = mean_interval(_rates(8, 10), 1)  # textbook: 8/10 -> 0.490 .. 0.943
    assert low == pytest.approx(0.4902, abs=1e-3) and high == pytest.approx(0.9433, abs=1e-3)
    assert mean_interval(_rates(10, 10), 1, 10) == (1.0, 1.0)  # the whole population
    narrow = mean_interval(_rates(40, 50), 1, 60)
    wide = mean_interval(_rates(40, 50), 1, 10_000)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]  # finite-population correction


def test_sample_variance_is_never_zero_for_a_sample():
    assert mean_variance(_rates(10, 10), 1, 100) > 0
    assert mean_variance(_rates(10, 10), 1, 10) == 0  # census


def _sampled_board() -> ScoreBoard:
    board = ScoreBoard()
    expected = {"simple_python": {f"simple_python_{i}" for i in range(40)},
                "multiple": {f"multiple_{i}" for i in range(20)}}  # fmt: skip
    board.expect(expected, {"simple_python": 400, "multiple": 200})
    for i in range(40):
        board.add_verdict(f"simple_python_{i}", "simple_python", i % 4 != 0)
    for i in range(20):
        board.add_verdict(f"multiple_{i}", "multiple", True)
    return board


def test_sampled_categories_are_scored_with_an_interval():
    scores = _sampled_board().scores()
    cat = scores.categories["simple_python"]
    assert cat.complete and cat.sampled_from == 400 and cat.accuracy == 0.75
    assert cat.ci_low is not None and cat.ci_low < 0.75 < cat.ci_high
    assert scores.groups["simple"].accuracy is None  # java and javascript were not selected
    assert scores.overall.accuracy is None


def test_a_sampled_group_combines_its_members():
    board = ScoreBoard()
    sizes = {"simple_python": 400, "simple_java": 100, "simple_javascript": 50}
    board.expect({n: {f"{n}_{i}" for i in range(5)} for n in sizes}, sizes)
    for name in sizes:
        for i in range(5):
            board.add_verdict(f"{name}_{i}", name, i != 0)
    simple = board.scores().groups["simple"]
    assert simple.accuracy == pytest.approx(0.8)
    assert simple.sampled == (15, 550)
    assert simple.ci_low is not None and simple.ci_low < 0.8 < simple.ci_high


def test_closing_sections_name_every_file_written(tmp_path):
    settings = Settings(
        model="oracle",
        categories="simple_python,multiple",
        report_path=tmp_path / "r.json",
        csv_dir=tmp_path / "csv",
        chart_path=tmp_path / "c.svg",
        save_baseline_path=tmp_path / "b.json",
    )
    metadata = {"model": "m", "mode": "fc", "dataset": {"version": "v", "data_dir": "/x"}}
    outcome = RunOutcome(board=_sampled_board(), settings=settings, metadata=metadata,
                         model_name="m")  # fmt: skip
    finished = finish_run(outcome)
    sections = dict(closing_sections(outcome, finished))
    files = "\n".join(sections["BFCL files written"])
    for path in ("r.json", "csv", "c.svg", "b.json"):
        assert str(tmp_path / path) in files
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is True
    assert report["categories"]["simple_python"]["scored"] == 40
    assert report["categories"]["simple_python"]["sampled_from"] == 400
    assert "sampled: 40 of 400" in "\n".join(sections["BFCL V4 scores"])


def test_failure_list_puts_regressions_first_and_stops_at_the_limit():
    notes = [FailureNote(f"simple_python_{i}", "simple_python", "value_error", "wrong value")
             for i in range(30)]  # fmt: skip
    notes.append(FailureNote("multiple_7", "multiple", "type_error", "x" * 500, regression=True))
    lines = failure_lines(notes, 5, {})
    assert lines[0].startswith("REGRESSION multiple_7 [multiple] type_error: xxx")
    assert len(lines[0]) < 250
    assert lines[1].startswith("simple_python_0 ") and lines[2].startswith("simple_python_1 ")
    assert lines[5].startswith("... and 26 more")
    explained = failure_lines(notes[:1], 5, {"simple_python_0": "BFCL simple_python_0\n  why"})
    assert explained[-2:] == ["BFCL simple_python_0", "  why"]


def test_item_properties_round_trip():
    props = ItemProperties(id="a_1", category="a", baseline_valid=False, valid=False,
                           error_type="e", reason="r", latency=1.5, steps=3)  # fmt: skip
    pairs = props.pairs()
    assert ("bfcl_valid", "false") in pairs and ("bfcl_latency", 1.5) in pairs
    assert ItemProperties.from_pairs(pairs) == props
    assert ItemProperties.from_pairs([("other", 1), ("bfcl_unknown", 2)]) == ItemProperties()


def test_csv_says_na_for_a_group_with_nothing_run():
    board = ScoreBoard()
    for i in range(400):
        board.add_verdict(f"simple_python_{i}", "simple_python", True)
    tables = csv_tables(board.scores(), "m", [])
    header, row = tables["data_overall.csv"].split("\n")
    cells = dict(zip(header.split(","), row.split(","), strict=True))
    assert cells["Live Acc"] == "N/A"
    assert cells["Multi Turn Acc"] == "N/A"
    assert cells["Overall Acc"] != "N/A"  # the leaderboard's zero-filled figure: something ran


def test_gate_table_labels_groups_and_never_prints_minus_zero():
    baseline = {f"irrelevance_{i}": True for i in range(10)}
    baseline |= {f"live_irrelevance_{i}-0-0": i != 3 for i in range(10)}
    gate = compare(dict(baseline), baseline, GateSettings())
    lines = gate_block(gate)
    names = [line.split()[0] for line in lines[2:] if line.strip()]
    assert "irrelevance" in names
    assert any(line.startswith("irrelevance_detection (group)") for line in lines)
    assert "-0.00" not in "\n".join(lines)


def test_written_paths_include_results_and_junit(tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites><testsuite name="pytest" tests="0"/></testsuites>')
    results = tmp_path / "results" / "m"
    (results / "non_live").mkdir(parents=True)
    (results / "non_live" / "BFCL_v4_simple_python_result.json").write_text("{}\n")
    outcome = RunOutcome(board=_sampled_board(), settings=Settings(model="oracle"),
                         metadata={"dataset": {}}, model_name="m", junit_path=junit,
                         results_root=results)  # fmt: skip
    written = finish_run(outcome).written
    assert ("junit", junit) in written and ("generations", results) in written


def test_partial_eval_scores_categories_over_the_entries_present():
    board = ScoreBoard()
    for name, n in (("simple_python", 300), ("simple_java", 100), ("simple_javascript", 50)):
        for i in range(n):
            board.add_verdict(f"{name}_{i}", name, i % 2 == 0)
    default = board.scores()
    assert default.groups["simple"].accuracy is None  # simple_python is missing 100 entries
    assert default.groups["simple"].reference_accuracy == pytest.approx(1 / 3)  # python as 0
    partial = board.scores(partial_eval=True)
    assert partial.partial_eval
    assert partial.groups["simple"].accuracy == pytest.approx(0.5)
    assert partial.categories["simple_python"].accuracy == 0.5


def test_web_tool_failures_are_counted_and_shown():
    board = ScoreBoard()
    board.add_verdict("web_search_base_0", "web_search_base", True)
    board.add_tool_failures("web_search_base", 2, 3)
    board.add_tool_failures("web_search_base", 0, 0)
    board.add_tool_failures("web_search_base", 1, 0)
    scores = board.scores()
    assert scores.categories["web_search_base"].tool_failures == {"search": 3, "fetch": 3}
    table = "\n".join(score_table(scores, {}))
    assert "web tools failed: 3 searches, 3 fetches" in table
    props = ItemProperties(search_failures=3, fetch_failures=0)
    assert ItemProperties.from_pairs(props.pairs()) == props


def test_exec_summary_in_the_table_csv_and_markdown():
    from pytest_bfcl.dataset.categories import DATASET_SIZES
    from pytest_bfcl.report.markdown import markdown_summary

    board = ScoreBoard()
    for name, share in (("exec_simple", 0.8), ("exec_multiple", 0.6), ("exec_parallel", 0.4),
                        ("exec_parallel_multiple", 0.2)):  # fmt: skip
        size = DATASET_SIZES[name]
        for i in range(size):
            board.add_verdict(f"{name}_{i}", name, i < share * size)
    scores = board.scores()
    assert scores.groups["exec_summary"].accuracy == pytest.approx(0.5)  # unweighted mean
    assert "Exec Summary                  50.00%" in "\n".join(score_table(scores, {}))
    header, row = csv_tables(scores, "m", [])["data_executable.csv"].split("\n")
    assert dict(zip(header.split(","), row.split(","), strict=True))["Exec Summary"] == "50.00%"
    assert "Exec Summary (legacy executable categories):  50.00%" in markdown_summary(
        scores, {}, None
    )
    plain = ScoreBoard()
    plain.add_verdict("simple_python_0", "simple_python", True)
    assert "Exec Summary" not in "\n".join(score_table(plain.scores(), {}))
    assert "data_executable.csv" not in csv_tables(plain.scores(), "m", [])


def test_a_baseline_saved_from_an_incomplete_run_warns_in_one_line(tmp_path):
    settings = Settings(model="oracle", categories="simple_python,multiple",
                        save_baseline_path=tmp_path / "b.json")  # fmt: skip
    metadata = {"model": "m", "mode": "fc", "dataset": {"version": "v", "data_dir": "/x"}}
    board = ScoreBoard()
    board.expect({"simple_python": {f"simple_python_{i}" for i in range(10)},
                  "multiple": {f"multiple_{i}" for i in range(5)}})  # fmt: skip
    for i in range(7):
        board.add_verdict(f"simple_python_{i}", "simple_python", True)
    for i in range(5):
        board.add_verdict(f"multiple_{i}", "multiple", True)
    outcome = RunOutcome(board=board, settings=settings, metadata=metadata, model_name="m")
    files = dict(closing_sections(outcome, finish_run(outcome)))["BFCL files written"]
    warnings = [line for line in files if line.startswith("warning:")]
    assert warnings == [
        "warning: the baseline was saved from an incomplete run; not scored: "
        "simple_python (3 of 10)"
    ]
    assert (tmp_path / "b.json").is_file()
    for i in range(7, 10):  # complete: no warning
        board.add_verdict(f"simple_python_{i}", "simple_python", True)
    files = dict(closing_sections(outcome, finish_run(outcome)))["BFCL files written"]
    assert not [line for line in files if line.startswith("warning:")]


def test_csv_cost_only_from_prices_and_no_multi_turn_figures_without_multi_turn():
    board = ScoreBoard()
    for i in range(10):
        board.add_verdict(f"simple_python_{i}", "simple_python", True)
    latencies = [12.5, 30.0, 41.0]  # the reference would price these at a self-hosted rate

    def overall(cost: float | None) -> dict[str, str]:
        header, row = csv_tables(board.scores(), "m", latencies, cost)["data_overall.csv"].split(
            "\n"
        )
        return dict(zip(header.split(","), row.split(","), strict=True))

    cells = overall(None)
    assert cells["Total Cost ($)"] == "N/A"
    assert cells["Latency Mean (s)"] == "27.83"
    for column in ("Multi Turn Acc", "Multi Turn Base", "Multi Turn Long Context"):
        assert cells[column] == "N/A"
    multi = csv_tables(board.scores(), "m", latencies)["data_multi_turn.csv"].split("\n")[1]
    assert multi == "1,m,N/A,N/A,N/A,N/A,N/A"
    assert overall(1.234)["Total Cost ($)"] == "1.23"


def test_the_chart_has_a_legend_naming_its_colours():
    import xml.etree.ElementTree as ET

    from pytest_bfcl.report.chart import svg_chart

    board = ScoreBoard()
    for i in range(50):
        board.add_verdict(f"simple_python_{i}", "simple_python", i >= 20)
    baseline = {f"simple_python_{i}": True for i in range(50)}
    gate = compare(board.verdicts, baseline, GateSettings())
    svg = ET.fromstring(svg_chart(board.scores(), gate, "t"))
    ns = "{http://www.w3.org/2000/svg}"
    legend = svg.find(f"{ns}g[@class='legend']")
    assert legend is not None
    labels = [t.text for t in legend.iter(f"{ns}text")]
    assert labels == ["current score", "baseline", "significant drop (gate failed)"]
    colours = {r.get("fill") for r in legend.iter(f"{ns}rect")}
    bars = {r.get("fill") for r in svg.iter(f"{ns}rect")} - colours
    assert bars == set() and len(colours) == 3  # every bar colour is explained
    alone = ET.fromstring(svg_chart(board.scores(), None, "t"))
    assert [t.text for t in alone.find(f"{ns}g[@class='legend']").iter(f"{ns}text")] == [
        "current score"
    ]


def test_the_html_score_table_shows_web_tool_failures():
    from pytest_bfcl.report.html.page import render_html

    board = ScoreBoard()
    board.add_verdict("web_search_base_0", "web_search_base", True)
    board.add_tool_failures("web_search_base", 1, 4)
    page = render_html([], {}, board.scores(), None, {"model": "m"})
    assert "web tools failed: 1 search, 4 fetches" in page
