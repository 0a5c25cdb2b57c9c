"""Before a run asks anything, it says how many queries it asks at most and, once a run of the
same model has measured its pace here, about how long that takes; a cached rerun keeps the
measured pace."""

from __future__ import annotations

import json
import re

from pytest_bfcl.run.pace import (
    MIN_QUERIES,
    Pace,
    duration,
    estimate_line,
    read_pace,
    record_pace,
)


def _run(pytester, server, cache, *extra):
    return pytester.runpytest(
        "-p", "no:cacheprovider", "--bfcl-model=test-model", f"--bfcl-base-url={server.base_url}",
        "--bfcl-category=simple_python", "--bfcl-sample=40", "--bfcl-seed=2",
        f"--bfcl-cache-dir={cache}", *extra,
    )  # fmt: skip


def test_the_header_says_what_a_run_asks_and_then_how_long_it_takes(pytester, dataset, tmp_path):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    cache = tmp_path / "cache"
    with FakeOpenAI(dataset, ["simple_python"]) as server:
        first = _run(pytester, server, cache).stdout.str()
        assert "bfcl: this run asks at most 40 model queries (40 entries;" in first
        assert "no pace of this model measured here yet" in first
        kept = json.loads((cache / "pace.json").read_text())
        (pace,) = kept.values()
        assert pace["queries"] == 40 and pace["queries_per_s"] > 0
        # a rerun answered from the cache says how long asking would take, and keeps the pace
        second = _run(pytester, server, cache).stdout.str()
        found = re.search(
            r"about (\S+) at ([\d.]+) queries/s, the pace this model's run of", second
        )
        assert found is not None and float(found.group(2)) == round(pace["queries_per_s"], 2)
        assert json.loads((cache / "pace.json").read_text()) == kept
        # another concurrency is another pace
        third = _run(pytester, server, cache, "--bfcl-concurrency=2").stdout.str()
        assert "no pace of this model measured here yet" in third
        # a stated pace wins over the measured one
        stated = _run(pytester, server, cache, "--bfcl-pace=0.5").stdout.str()
        assert (
            "(40 entries; answers in the response cache are not asked again); about 1m at the 0.5 queries/s stated"
            in stated
        )
    bad = pytester.runpytest("-p", "no:cacheprovider", "--bfcl-model=oracle", "--bfcl-pace=0")
    assert bad.ret == 4 and "--bfcl-pace" in bad.stderr.str()
    # a model that asks nothing says nothing of queries
    oracle = pytester.runpytest("-p", "no:cacheprovider", "--bfcl-model=oracle",
                                "--bfcl-category=simple_python", "--bfcl-sample=5")  # fmt: skip
    assert "model queries (" not in oracle.stdout.str()


def test_a_pace_is_kept_only_when_measured_and_a_bad_file_is_no_pace(tmp_path):
    assert record_pace(tmp_path, "k", MIN_QUERIES - 1, 10.0) is None
    assert record_pace(tmp_path, "k", 100, 0.0) is None and not (tmp_path / "pace.json").exists()
    kept = record_pace(tmp_path, "k", 100, 20.0)
    assert kept is not None and kept.queries_per_s == 5.0 and read_pace(tmp_path, "k") == kept
    (tmp_path / "pace.json").write_text("{" * 50_000)
    assert read_pace(tmp_path, "k") is None
    (tmp_path / "pace.json").write_text(json.dumps({"k": {"queries_per_s": "fast"}}))
    assert read_pace(tmp_path, "k") is None
    assert record_pace(tmp_path / "pace.json" / "under-a-file", "k", 100, 20.0) is None


def test_the_estimate_reads_in_minutes_and_hours():
    pace = Pace(queries_per_s=2.0, queries=100, wall_s=50.0, recorded_at="2026-11-29")
    line = estimate_line(3641, 4441, pace)
    assert "asks at most 4,441 model queries (3,641 entries;" in line
    assert "about 37m at 2.00 queries/s" in line and "(100 queries in 50s)" in line
    assert duration(30) == "30s" and duration(3 * 3600 + 5 * 60) == "3h 05m"
