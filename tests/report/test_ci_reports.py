"""The reports CI reads: junit (validated against a schema), CSV layout, Markdown summary,
SVG chart."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gate_scenario import ids


def test_reports_for_ci(gate_env, tmp_path, monkeypatch):
    xmlschema = pytest.importorskip("xmlschema")
    run, _ = gate_env
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit, csv_dir, chart = tmp_path / "junit.xml", tmp_path / "csv", tmp_path / "chart.svg"
    result = run(
        ids(range(20)) | ids(range(100, 140)),
        f"--junitxml={junit}",
        f"--bfcl-csv={csv_dir}",
        f"--bfcl-chart={chart}",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED

    schema = xmlschema.XMLSchema(Path(__file__).parents[1] / "data" / "junit.xsd")
    schema.validate(str(junit))
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    summary_case = next(c for c in cases if c.get("classname") == "bfcl.summary")
    props = {p.get("name"): p.get("value") for p in summary_case.iter("property")}
    assert props["bfcl_total"] == "400" and props["bfcl_regressions"] == "40"
    assert summary_case.find("failure") is not None
    regressed = next(c for c in cases if c.get("name") == "simple_python_100")
    regressed_props = {p.get("name"): p.get("value") for p in regressed.iter("property")}
    assert (
        regressed_props["bfcl_baseline_valid"] == "true"
        and regressed_props["bfcl_valid"] == "false"
    )

    overall = (csv_dir / "data_overall.csv").read_text().split("\n")
    header, row = overall[0].split(","), overall[1].split(",")
    assert len(header) == len(row) == 36 and header[1] == "Overall Acc" and header[35] == "License"
    assert row[0] == "1" and row[9] == "N/A"  # Non-Live Simple AST needs java/javascript too
    assert row[5] == "1.0"  # latency mean, a raw column
    non_live = dict(
        zip(
            *[line.split(",") for line in (csv_dir / "data_non_live.csv").read_text().split("\n")],
            strict=True,
        )
    )
    assert non_live["Python Simple AST"] == "85.00%"
    assert not (csv_dir / "data_live.csv").read_text().endswith("\n")
    fs_header = (csv_dir / "data_format_sensitivity.csv").read_text().split("\n")[0].split(",")
    assert len(fs_header) == 4 + 26

    svg = ET.parse(chart).getroot()
    assert svg.tag.endswith("svg")
    text = summary.read_text()
    assert "| simple_python :x: | 95.00% | 85.00% | -10.00 |" in text
    assert "Gate (significant): **FAILED**" in text


def test_summary_testcases_spliced_as_text_equal_the_parsed_way(tmp_path):
    from pytest_bfcl.report.junit.summary import _add_parsed, _splice

    written = (
        '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
        '<testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2" time="0.1">'
        '<testcase classname="bfcl.simple" name="simple_0" time="0.001" />'
        '<testcase classname="bfcl.simple" name="simple_1" time="0.001">'
        '<failure message="a &lt;/testsuite&gt; &quot;quoted&quot;">text</failure></testcase>'
        "</testsuite></testsuites>"
    )
    cases = [ET.Element("testcase", classname="bfcl.summary", name=n) for n in ("a", "b")]
    ET.SubElement(cases[1], "failure", message="dropped")
    spliced = _splice(written, cases, 1, 0)
    assert spliced is not None
    parsed = tmp_path / "junit.xml"
    parsed.write_text(written, "utf-8")
    _add_parsed(parsed, cases, 1, 0)
    assert ET.canonicalize(spliced) == ET.canonicalize(parsed.read_text("utf-8").split("?>", 1)[1])
    suite = ET.fromstring(spliced).find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("4", "2")
    assert _splice("<testsuites><testsuite /></testsuites>", cases, 1, 0) is None
