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
