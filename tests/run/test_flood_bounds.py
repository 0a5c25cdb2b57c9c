"""A conversation ended by its budget leaves an excerpt, not the flood: its results record is
small, its answers leave the response cache (the rerun asks again), and an entry that did not
flood keeps its cache records and its whole log. Peak memory and bytes written for a
112-entry flood are measured in benchmarks/test_flood_bounds.py."""

from __future__ import annotations

import json

from pytest_bfcl.run.excerpts import EXCERPT_CHARS, EXCERPT_ITEMS, excerpt
from pytest_bfcl.testing.fake_openai import FakeOpenAI


def test_an_excerpt_cuts_every_text_and_list_and_says_how_much_there_was():
    flood = {"log": [{"content": "a" * 10_000, "n": 3}] * 500, "ok": "short"}
    cut = excerpt(flood)
    assert cut["ok"] == "short" and cut["log"][0]["n"] == 3
    assert len(cut["log"]) == EXCERPT_ITEMS + 1 and cut["log"][-1] == "[cut: 500 items in all]"
    text = cut["log"][0]["content"]
    assert text.startswith("a" * EXCERPT_CHARS) and text.endswith("[cut: 10,000 characters in all]")
    assert excerpt(None) is None and excerpt([1, "x"]) == [1, "x"]


def test_a_flooding_conversation_leaves_an_excerpt_and_no_cache_records(
    pytester, dataset, data_source, tmp_path
):
    flooding, calm = (e.id for e in dataset.entries("multi_turn_base")[150:152])  # unique in -k
    cache, results = tmp_path / "cache", tmp_path / "results"
    args = [
        "--bfcl-model=test-model", "--bfcl-category=multi_turn_base",
        f"--bfcl-data={data_source.data_dir}", f"--bfcl-results-dir={results}",
        f"--bfcl-cache-dir={cache}", "--bfcl-max-entry-bytes=1500000",
        "-k", f"{flooding} or {calm}", "-p", "no:cacheprovider",
    ]  # fmt: skip
    with FakeOpenAI(dataset, ["multi_turn_base"]) as fake:
        fake.flood = (10, 50_000)  # about 500 kB an answer, every step calls again
        fake.faults = {flooding: ["flood"] * 30}
        result = pytester.runpytest_subprocess(f"--bfcl-base-url={fake.base_url}", *args)
        assert fake.requests[flooding] == 3
        calm_requests = fake.requests[calm]
    out = result.stdout.str()
    assert result.parseoutcomes().get("failed") == 1, out[-3000:]
    stored = next(results.rglob("BFCL_v4_multi_turn_base_result.json"))
    records = {r["id"]: r for r in map(json.loads, stored.read_text().splitlines())}
    assert "outgrew its budget" in records[flooding]["result"]
    assert len(json.dumps(records[flooding])) < 200_000  # the flood was 1.5 MB and more
    assert "characters in all]" in json.dumps(records[flooding]["inference_log"])
    assert "characters in all]" not in json.dumps(records[calm])  # kept whole
    kept = list(cache.rglob("*.json"))
    assert len(kept) == calm_requests  # the calm entry's answers only
    with FakeOpenAI(dataset, ["multi_turn_base"]) as fake:  # the rerun asks the flood again
        fake.flood = (10, 50_000)
        fake.faults = {flooding: ["flood"] * 30}
        pytester.runpytest_subprocess(f"--bfcl-base-url={fake.base_url}", *args)
        assert fake.requests[flooding] == 3 and fake.requests[calm] == 0


def test_a_conversation_echoing_megabytes_of_reasoning_under_its_budget_keeps_excerpts(
    pytester, dataset, data_source, tmp_path
):
    flooding, calm = (e.id for e in dataset.entries("multi_turn_base")[150:152])
    cache, results = tmp_path / "cache", tmp_path / "results"
    args = [
        "--bfcl-model=test-model", "--bfcl-category=multi_turn_base",
        f"--bfcl-data={data_source.data_dir}", f"--bfcl-results-dir={results}",
        f"--bfcl-cache-dir={cache}", "-k", f"{flooding} or {calm}", "-p", "no:cacheprovider",
    ]  # fmt: skip
    with FakeOpenAI(dataset, ["multi_turn_base"]) as fake:
        fake.reasoning_chars = 800_000  # echoed back at every step: megabytes, under 16 MiB
        fake.faults = {flooding: ["reasoning_flood"] * 30}
        result = pytester.runpytest_subprocess(f"--bfcl-base-url={fake.base_url}", *args)
        flood_requests, calm_requests = fake.requests[flooding], fake.requests[calm]
    out = result.stdout.str()
    assert flood_requests >= 3 and result.parseoutcomes().get("passed") == 2, out[-3000:]
    stored = next(results.rglob("BFCL_v4_multi_turn_base_result.json"))
    records = {r["id"]: r for r in map(json.loads, stored.read_text().splitlines())}
    flood = records[flooding]
    assert isinstance(flood["result"], list) and flood["result"]  # its calls, whole: scored
    assert len(json.dumps(flood)) < 300_000  # its reasoning alone was megabytes, thrice
    assert "characters in all]" in json.dumps(flood["reasoning_content"])
    assert "characters in all]" in json.dumps(flood["inference_log"])
    assert len(list(cache.rglob("*.json"))) == calm_requests  # the flood's answers not kept


def test_a_web_search_flood_is_stopped_at_the_budget_before_its_results_are_held(
    pytester, dataset, data_source, tmp_path
):
    from pytest_bfcl.testing.fake_web import FakeWeb

    with FakeOpenAI(dataset, ["web_search_base"]) as fake, FakeWeb(hits=1) as web:
        fake.chat_fault, fake.searches = "search_flood", 300
        web.snippet_chars = 400_000  # 300 searches: 120 MB a step, were they all held
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model", f"--bfcl-base-url={fake.base_url}",
            "--bfcl-category=web_search_base", f"--bfcl-data={data_source.data_dir}",
            "--bfcl-web-provider=serpapi", f"--bfcl-web-search-url={web.search_url}",
            "--bfcl-web-allow-private", "--bfcl-max-entry-bytes=2000000",
            f"--bfcl-results-dir={tmp_path / 'results'}", f"--bfcl-cache-dir={tmp_path / 'c'}",
            "-k", "web_search_base_0", "-p", "no:cacheprovider",
        )  # fmt: skip
        searches = web.requests["search"]
    out = result.stdout.str()
    assert result.parseoutcomes().get("failed") == 1, out[-3000:]
    assert "entry:budget_exceeded" in out or "budget" in out
    assert searches <= 8  # the probe, and the searches that fill 2 MB: not 300
