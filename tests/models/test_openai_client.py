"""Real-model path against a local OpenAI-compatible server: both modes, the response cache and
resume, retries, and faults (infrastructure errors are E, model errors are F)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pytest_bfcl.testing.fake_openai import FakeOpenAI

CATS = ["live_parallel", "live_relevance", "live_irrelevance"]


@pytest.fixture
def server(dataset):
    with FakeOpenAI(dataset, CATS) as fake:
        yield fake


def args(fake, tmp_path, *extra, category="live_parallel,live_relevance"):
    return [
        "--bfcl-model=test-model",
        f"--bfcl-base-url={fake.base_url}",
        f"--bfcl-category={category}",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        "--bfcl-retries=2",
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def test_function_calling_scores_equal_the_oracle(pytester, server, tmp_path):
    result = pytester.runpytest(*args(server, tmp_path))
    result.assert_outcomes(passed=32)
    assert server.total_requests() == 32


def test_prompting_mode_scores_equal_the_oracle(pytester, server, tmp_path):
    server.mode = "prompt"
    result = pytester.runpytest(*args(server, tmp_path, "--bfcl-mode=prompt"))
    result.assert_outcomes(passed=32)


def test_cache_answers_a_rerun_without_requests(pytester, server, tmp_path):
    report = tmp_path / "r.json"
    pytester.runpytest(*args(server, tmp_path, f"--bfcl-report={report}")).assert_outcomes(
        passed=32
    )
    first = json.loads(report.read_text())["categories"]
    sent = server.total_requests()
    pytester.runpytest(*args(server, tmp_path, f"--bfcl-report={report}")).assert_outcomes(
        passed=32
    )
    assert server.total_requests() == sent  # nothing sent again
    assert json.loads(report.read_text())["categories"] == first
    pytester.runpytest(*args(server, tmp_path, "--bfcl-refresh")).assert_outcomes(passed=32)
    assert server.total_requests() == 2 * sent
    pytester.runpytest(*args(server, tmp_path, "--bfcl-no-cache")).assert_outcomes(passed=32)
    assert server.total_requests() == 3 * sent


def test_rate_limits_and_server_errors_are_retried(pytester, server, tmp_path):
    server.faults = {"live_parallel_0-0-0": ["429", "429"], "live_parallel_1-0-1": ["500", "drop"]}
    # A dropped connection can also break the next request on a pooled connection: allow it.
    result = pytester.runpytest(
        *args(server, tmp_path, "--bfcl-category=live_parallel", "--bfcl-retries=4")
    )
    result.assert_outcomes(passed=16)
    assert server.requests["live_parallel_0-0-0"] == 3
    assert server.requests["live_parallel_1-0-1"] == 3


def test_exhausted_retries_are_infrastructure_errors(pytester, server, tmp_path):
    server.faults = {"live_parallel_2-0-2": ["500"] * 3}
    result = pytester.runpytest(*args(server, tmp_path, "--bfcl-category=live_parallel"))
    result.assert_outcomes(passed=15, errors=1)
    assert "no usable answer after 3 attempts" in result.stdout.str()


def test_malformed_answers_are_model_failures(pytester, server, tmp_path):
    server.faults = {"live_parallel_3-0-3": ["malformed"], "live_parallel_4-1-0": ["empty"]}
    result = pytester.runpytest(*args(server, tmp_path, "--bfcl-category=live_parallel"))
    # no choices at all is the server's failure: asked again, then answered
    result.assert_outcomes(passed=15, failed=1)
    assert "ast_decoder:decoder_failed" in result.stdout.str()
    assert server.requests["live_parallel_4-1-0"] == 2


def test_dead_server_stops_the_session_before_generation(pytester, dataset, tmp_path):
    fake = FakeOpenAI(dataset, CATS)  # never started: nothing listens on its port
    fake.server.server_close()
    result = pytester.runpytest_subprocess(
        *args(fake, tmp_path, "--bfcl-category=live_irrelevance", "--bfcl-concurrency=2"),
        timeout=120,
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret != 0
    assert "passed" not in result.stdout.str()
    # one line naming the URL and the fix, no traceback
    assert output.count("connection refused") == 1, output[-3000:]
    assert f"{fake.base_url}/models" in output and "--bfcl-base-url" in output
    assert "Traceback" not in output


def test_kill_and_resume_sends_no_cached_request_again(dataset, tmp_path, data_source):
    with FakeOpenAI(dataset, ["simple_python"], latency=0.05) as fake:
        report = tmp_path / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--bfcl-model=test-model",
            f"--bfcl-base-url={fake.base_url}",
            "--bfcl-category=simple_python",
            f"--bfcl-cache-dir={tmp_path / 'cache'}",
            "--bfcl-concurrency=4",
            f"--bfcl-report={report}",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ]
        proc = subprocess.Popen(
            cmd,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while fake.total_requests() < 60 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        cached = sum(1 for _ in (tmp_path / "cache").rglob("*.json"))
        before = dict(fake.requests)
        assert 0 < cached < 400
        done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:]
        resent = [
            i for i, n in fake.requests.items() if n > before.get(i, 0) and before.get(i, 0) > 0
        ]
        # Entries answered before the kill were served from the cache; only the ones that were
        # in flight at the kill (at most the concurrency) were asked again.
        assert len(resent) <= 4
        assert fake.total_requests() - sum(before.values()) == 400 - cached
        scores = json.loads(report.read_text())["categories"]["simple_python"]
        assert (scores["correct"], scores["total"]) == (400, 400)


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_multi_turn_conversations_through_an_endpoint(pytester, dataset, tmp_path, mode):
    """Each conversation step is one request with the whole history; scores equal the
    oracle's, and a rerun is answered from the cache step by step."""
    with FakeOpenAI(dataset, ["multi_turn_miss_func"], mode=mode) as fake:
        extra = ["--bfcl-concurrency=16", f"--bfcl-mode={mode}", "-k", "miss_func_1"]
        run_args = args(fake, tmp_path, *extra, category="multi_turn_miss_func")
        result = pytester.runpytest(*run_args)
        outcomes = result.parseoutcomes()
        # ids containing "miss_func_1"; on a failure, show why (errors name their cause)
        assert (outcomes.get("passed"), outcomes.get("errors", 0)) == (111, 0), "\n".join(
            line for line in result.outlines if "Error" in line or line.startswith("E ")
        )[-4000:]
        first = fake.total_requests()
        assert first > 111 * 4  # several turns, each a call step and an answer step
        result = pytester.runpytest(*run_args)
        result.assert_outcomes(passed=111)
        assert fake.total_requests() == first


def test_xdist_workers_keep_requests_in_flight(pytester, dataset, tmp_path):
    """Under xdist the workers prefetch what they are sent and share --bfcl-concurrency, so
    the server sees many requests at once, not one per worker."""
    with FakeOpenAI(dataset, ["live_simple"], latency=0.05) as fake:
        run_args = args(fake, tmp_path, "-n", "2", "--bfcl-concurrency=8", category="live_simple")
        result = pytester.runpytest_subprocess(*run_args)
        result.assert_outcomes(passed=256, failed=2)  # the oracle's known failures
        assert fake.total_requests() == 258
        # Each worker is dealt its whole share at once: both keep their 4 slots busy, and
        # together they never exceed the run's 8.
        assert 6 <= fake.max_in_flight <= 8


def test_url_and_headers_come_from_the_sdks_environment_variables(monkeypatch):
    from pytest_bfcl.models.endpoint_request import (
        DEFAULT_BASE_URL,
        request_headers,
        resolved_base_url,
    )

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_ORG_ID", raising=False)
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)
    assert resolved_base_url(None) == DEFAULT_BASE_URL
    assert resolved_base_url("http://h:1/v1/") == "http://h:1/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway:8/v1/")
    assert resolved_base_url(None) == "http://gateway:8/v1"
    assert resolved_base_url("http://h:1/v1") == "http://h:1/v1"  # the flag wins
    headers = request_headers("sk-test")
    assert headers["Authorization"] == "Bearer sk-test"
    assert "OpenAI-Organization" not in headers and "OpenAI-Project" not in headers
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    headers = request_headers("sk-test")
    assert headers["OpenAI-Organization"] == "org-1" and headers["OpenAI-Project"] == "proj-1"


def test_requests_reach_the_server_with_the_key_as_a_bearer_token(
    pytester, server, tmp_path, monkeypatch
):
    monkeypatch.setenv("BENCH_SECRET_KEY", "sk-bearer-check-123")
    result = pytester.runpytest(
        *args(server, tmp_path, "--bfcl-api-key-env=BENCH_SECRET_KEY", category="live_relevance")
    )
    assert result.ret == 0
    assert server.authorizations
    assert set(server.authorizations) == {"Bearer sk-bearer-check-123"}


@pytest.mark.parametrize(
    "selection",
    [
        ("-k", "live_relevance_1"),
        ("--deselect", "bfcl/live_parallel"),
        ("-m", "bfcl_live_relevance"),
    ],
)
def test_entries_left_out_by_a_selection_are_never_requested(pytester, server, tmp_path, selection):
    # Without a selection generation starts while pytest collects; with one it must wait for
    # the collected items, or the server would be asked (and paid) for entries nobody reports.
    result = pytester.runpytest(*args(server, tmp_path), *selection)
    outcomes = result.parseoutcomes()
    ran = outcomes.get("passed", 0) + outcomes.get("failed", 0)
    assert 0 < ran < 32
    assert server.total_requests() == ran
    assert all(entry_id.startswith("live_relevance") for entry_id in server.requests)


def test_without_a_selection_every_entry_is_requested_once(pytester, server, tmp_path):
    result = pytester.runpytest(*args(server, tmp_path))
    result.assert_outcomes(passed=32)
    assert server.total_requests() == 32  # (two entries share a question: one key, 2 requests)


def test_verdicts_worked_out_ahead_reach_their_items_and_a_scoring_error_is_raised_there(
    server, monkeypatch
):
    from collections import Counter

    from pytest_bfcl.kinds import kind_of
    from pytest_bfcl.run.engine import BfclRun
    from pytest_bfcl.settings import Settings

    settings = Settings(
        model="test-model",
        categories=["live_relevance"],
        base_urls=[server.base_url],
        no_cache=True,
        concurrency=4,
    )
    run = BfclRun.create(settings)
    ids = [entry.id for entry in run.entries_for("live_relevance")]
    broken = ids[3]
    scored: Counter[str] = Counter()
    relevance = kind_of("live_relevance")
    real = relevance.score

    def checker(entry, answer, result, context):
        scored[entry.id] += 1
        if entry.id == broken:
            raise RuntimeError("a checker bug")
        return real(entry, answer, result, context)

    monkeypatch.setattr(relevance, "score", checker)
    try:
        run.prefetch(ids)
        for entry_id in ids:
            generation = run.generation_for(entry_id)
            if entry_id == broken:
                with pytest.raises(RuntimeError, match="a checker bug"):
                    run.score(generation)
            else:
                assert run.score(generation).valid
    finally:
        run.close()
    # Each verdict was worked out once, on the generating thread; the broken one twice.
    assert {i: n for i, n in scored.items() if n != 1} == {broken: 2}


def test_entries_a_plugin_deselects_are_never_requested(pytester, server, tmp_path):
    # Deselection inside pytest_collection_modifyitems (pytest-split, a project's own option)
    # is only known after collection: generation must wait for the collected items.
    pytester.makeconftest(
        "def pytest_collection_modifyitems(config, items):\n"
        "    kept = [i for i in items if 'live_relevance' in i.nodeid]\n"
        "    config.hook.pytest_deselected(items=[i for i in items if i not in kept])\n"
        "    items[:] = kept\n"
    )
    result = pytester.runpytest(*args(server, tmp_path))
    result.assert_outcomes(passed=16, deselected=16)
    assert server.total_requests() == 16


@pytest.mark.parametrize("stop", ["--collect-only", "collection-error"])
def test_nothing_is_requested_when_pytest_will_run_nothing(pytester, server, tmp_path, stop):
    extra = [stop] if stop.startswith("--") else []
    if stop == "collection-error":
        pytester.makepyfile(test_broken="import a_module_that_does_not_exist\n")
    pytester.runpytest(*args(server, tmp_path), *extra)
    assert server.total_requests() == 0
