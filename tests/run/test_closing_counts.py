"""What the closing part says is what happened: the query count says how many answers came
from the response cache (a cache shared by servers of one served name answers for all of
them), and "BFCL files written" lists only what was written."""

from __future__ import annotations

import json
import re

import pytest

from pytest_bfcl.report.usage import usage_line
from pytest_bfcl.testing.fake_openai import FakeOpenAI


def test_the_usage_line_says_how_many_queries_the_cache_answered():
    summary = {"latency_s": {"p50": 0.1, "p95": 0.2, "max": 0.3}, "input_tokens": 10,
               "output_tokens": 2, "model_queries": 400}  # fmt: skip
    assert usage_line(summary).endswith(", 400 model queries")
    assert "400 model queries (all from the cache)" in usage_line(
        {**summary, "cached_queries": 400}
    )
    assert "400 model queries (150 from the cache)" in usage_line(
        {**summary, "cached_queries": 150}
    )


def test_another_server_of_the_same_name_is_answered_from_the_cache_and_it_says_so(
    pytester, dataset, tmp_path
):
    cache, report = tmp_path / "cache", tmp_path / "report.json"
    counts = []
    for _ in range(2):  # two servers, one served name, one cache
        with FakeOpenAI(dataset, ["live_relevance"]) as server:
            result = pytester.runpytest_subprocess(
                "--bfcl-model=test-model", f"--bfcl-base-url={server.base_url}",
                "--bfcl-category=live_relevance", f"--bfcl-cache-dir={cache}",
                f"--bfcl-report={report}", "-p", "no:cacheprovider", timeout=300,
            )  # fmt: skip
            counts.append(server.total_requests())
        out = result.stdout.str()
        usage = json.loads(report.read_text())["usage"]
        assert result.ret == 0, out[-2000:]
    assert counts[0] == usage["model_queries"] == 16 and counts[1] == 0
    assert usage["cached_queries"] == 16
    assert re.search(r"16 model queries \(all from the cache\)", out), out[-2000:]


def test_a_results_directory_where_nothing_could_be_written_is_not_listed_as_written(
    pytester, data_source, tmp_path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    results = blocker / "results"
    result = pytester.runpytest_subprocess(
        f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
        "--bfcl-category=simple_javascript", "-k", "simple_javascript_1",
        f"--bfcl-results-dir={results}", f"--bfcl-report={tmp_path / 'report.json'}",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    out = result.stdout.str()
    written = out.split("BFCL files written", 1)[1].split("BFCL files not written", 1)[0]
    assert "report.json" in written and "generations" not in written, out[-2000:]
    assert re.search(r"generations +\S+results\S*: no result could be written there", out)
    assert result.ret == pytest.ExitCode.OK
