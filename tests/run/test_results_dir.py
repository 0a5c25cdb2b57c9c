"""Generations written in the reference's result layout replay to the same scores, and the
report summarises latency, tokens and cost."""

from __future__ import annotations

import json


def _args(data_source, *extra):
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider", *extra]


def test_results_dir_round_trip_and_usage(pytester, data_source, tmp_path):
    results = tmp_path / "results"
    report = tmp_path / "report.json"
    categories = "--bfcl-category=simple_python,multi_turn_base,live_irrelevance"
    first = pytester.runpytest(
        "--bfcl-model=oracle",
        categories,
        "--bfcl-sample=60",
        f"--bfcl-results-dir={results}",
        f"--bfcl-report={report}",
        "--bfcl-price-input=2",
        "--bfcl-price-output=8",
        *_args(data_source),
    )
    first.assert_outcomes(passed=60)
    files = sorted(p.relative_to(results).as_posix() for p in results.rglob("*.json"))
    assert files == [
        "oracle/live/BFCL_v4_live_irrelevance_result.json",
        "oracle/multi_turn/BFCL_v4_multi_turn_base_result.json",
        "oracle/non_live/BFCL_v4_simple_python_result.json",
    ]
    multi = [
        json.loads(line)
        for line in (results / "oracle/multi_turn/BFCL_v4_multi_turn_base_result.json")
        .read_text()
        .splitlines()
    ]
    ids = [int(r["id"].rsplit("_", 1)[1]) for r in multi]
    assert ids == sorted(ids)  # dataset order
    assert all(isinstance(r["result"], list) and r["inference_log"] for r in multi)
    assert all(len(r["latency"]) == len(r["result"]) for r in multi)  # per turn

    second = pytester.runpytest(
        f"--bfcl-model=replay:{results}", categories, "--bfcl-sample=60", *_args(data_source)
    )
    second.assert_outcomes(passed=60)

    usage = json.loads(report.read_text())["usage"]
    assert usage["model_queries"] >= 60
    assert usage["cost_usd"] == 0.0  # the oracle reports no tokens
    assert usage["wall_s"] > 0


def test_usage_summary_percentiles_and_cost():
    from pytest_bfcl.report.usage import Prices, usage_line, usage_summary

    latencies = [float(i) for i in range(1, 101)]  # 1..100 s
    summary = usage_summary(latencies, 2_000_000, 500_000, 130, 50.0, Prices(input=2, output=8))
    assert summary["latency_s"]["p50"] == 50.0
    assert summary["latency_s"]["p95"] == 95.0
    assert summary["latency_s"]["max"] == 100.0
    assert summary["entries_per_s"] == 2.0
    assert summary["cost_usd"] == 2 * 2 + 0.5 * 8
    line = usage_line(summary)
    assert line is not None and "p95 95.00s" in line and "cost $8.0000" in line
    assert usage_summary([], 0, 0, 0, None)["latency_s"] is None


def test_progress_lines_during_a_run(pytester, data_source):
    result = pytester.runpytest(
        "--bfcl-model=oracle",
        "--bfcl-category=live_parallel,live_multiple",
        "--bfcl-progress=0.000001",
        *_args(data_source),
    )
    result.assert_outcomes(passed=1066, xfailed=3)
    # a progress line waits for the end of a row of results (one category's row here)
    lines = [x for x in result.stdout.lines if x.startswith("bfcl: ")]
    assert lines and "/1069 generated" in lines[-1] and "0 failed" in lines[-1]
