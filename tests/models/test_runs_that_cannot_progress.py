"""A run that cannot make progress stops with one line: a rate limit or quota that does not
lift within the wait budget, a base URL that redirects; a body that cannot be decoded is a
failed attempt like any network error. Timeouts here are safety nets only."""

from __future__ import annotations

import time

import pytest

from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.errors import SetupError
from pytest_bfcl.models.openai_chat import (
    EndpointSettings,
    InferenceError,
    OpenAIChatModel,
    ServerDown,
)
from pytest_bfcl.routing import rate_limit
from pytest_bfcl.routing.rate_limit import RETRY_AFTER_CAP, RateLimitWatch, retry_delay
from pytest_bfcl.testing.gateway_faults import REDIRECT_TARGET


def model_for(fake, texts, **overrides) -> OpenAIChatModel:
    settings = {"model": "test-model", "base_urls": (fake.base_url,), "backoff": 0.01}
    settings.update(overrides)
    return OpenAIChatModel(EndpointSettings(**settings), ScoringOptions("fc", True), texts)


# -- rate limits: waited out within a budget, then one stop ----------------------------------


def test_retry_after_is_honoured_up_to_its_cap_and_never_past_the_budget():
    assert retry_delay(0.01, 0, 5.0, left=100.0) >= 5.0  # never earlier than asked
    assert retry_delay(0.01, 0, 3600.0, left=1000.0) == RETRY_AFTER_CAP
    assert retry_delay(0.01, 0, 60.0, left=2.0) == 2.0  # the stop comes on time
    assert 0.5 <= retry_delay(1.0, 0, None, left=100.0) <= 1.0  # back-off with jitter


def test_the_budget_counts_from_the_first_429_and_an_answer_resets_it():
    watch = RateLimitWatch(budget=0.2)
    assert watch.limited("429") is None and watch.left() <= 0.2
    time.sleep(0.25)
    reason = watch.limited("HTTP 429 from x")
    assert reason is not None and "HTTP 429" in reason and "0.2 s" in reason
    watch.answered()
    assert watch.limited("429") is None and watch.left() > 0.1


def test_a_limit_that_lifts_costs_no_retries(server, texts, task):
    server.faults = {task.entry.id: ["rate_limit"] * 5}
    generation = model_for(server, texts, retries=1).generate(task)
    assert server.requests[task.entry.id] == 6 and isinstance(generation.result, list)


@pytest.mark.parametrize("fault", ["rate_limit", "rate_limit_60"])
def test_a_limit_that_does_not_lift_stops_the_run_within_the_budget(
    server, texts, task, fault, monkeypatch
):
    monkeypatch.setattr(rate_limit, "RATE_LIMIT_BUDGET", 1.5)
    server.chat_fault = fault  # Retry-After: 0, or 60 (honoured, but not past the budget)
    model = model_for(server, texts, retries=2)
    started = time.monotonic()
    with pytest.raises(ServerDown) as raised:
        model.generate(task)
    elapsed = time.monotonic() - started
    message = str(raised.value)
    assert 1.5 <= elapsed < 10, elapsed
    assert "nothing but HTTP 429" in message and "1.5 s" in message and "\n" not in message
    assert "Rate limit reached" in message  # the server's own words
    with pytest.raises(ServerDown):  # the next entry: at once, no request
        before = server.total_requests()
        model.generate(task)
    assert server.total_requests() == before


# -- redirects: refused before the run, with where they lead ---------------------------------


def test_a_redirecting_base_url_is_refused_at_the_probe_with_the_location(server, texts):
    server.always = "redirect"
    with pytest.raises(SetupError) as raised:
        model_for(server, texts).probe()
    message = str(raised.value)
    assert REDIRECT_TARGET in message and "HTTP 307" in message
    assert "--bfcl-base-url" in message and "\n" not in message
    assert not server.authorizations  # nothing was sent to where it leads


def test_a_server_that_starts_redirecting_mid_run_stops_it(server, texts, task):
    server.chat_fault = "redirect"
    with pytest.raises(ServerDown) as raised:
        model_for(server, texts, retries=4).generate(task)
    assert REDIRECT_TARGET in str(raised.value) and "--bfcl-base-url" in str(raised.value)


# -- an undecodable body is a failed attempt -------------------------------------------------


def test_a_body_that_cannot_be_decoded_is_retried(server, texts, task):
    server.faults = {task.entry.id: ["bad_gzip"]}
    generation = model_for(server, texts).generate(task)
    assert server.requests[task.entry.id] == 2 and isinstance(generation.result, list)


def test_a_server_whose_bodies_never_decode_is_one_line_per_entry(server, texts, task):
    server.chat_fault = "bad_gzip"
    with pytest.raises(InferenceError) as raised:
        model_for(server, texts, retries=1).generate(task)
    message = str(raised.value)
    assert "could not be decoded" in message and "Content-Encoding" in message
    assert "\n" not in message and "Traceback" not in message


# -- as a user sees it: one line, the other reports written ----------------------------------


def run_session(pytester, server, tmp_path, *extra):
    return pytester.runpytest_subprocess(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={server.base_url}",
        "--bfcl-category=live_relevance",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        f"--bfcl-report={tmp_path / 'report.json'}",
        "--bfcl-retries=1",
        "-p",
        "no:cacheprovider",
        *extra,
        timeout=300,
    )


def test_a_session_under_a_limit_that_never_lifts_ends_with_one_line(pytester, server, tmp_path):
    pytester.makeconftest(
        "from pytest_bfcl.routing import rate_limit\nrate_limit.RATE_LIMIT_BUDGET = 2.0\n"
    )
    server.chat_fault = "rate_limit_60"
    started = time.monotonic()
    result = run_session(pytester, server, tmp_path)
    out = result.stdout.str() + result.stderr.str()
    assert time.monotonic() - started < 120
    # as a dead server: the entry in flight is an error, and the session stops once
    assert (
        out.count("Interrupted: pytest-bfcl: the model server has answered nothing but HTTP 429")
        == 1
    ), out[-3000:]
    assert "Traceback" not in out and (tmp_path / "report.json").is_file()
    assert result.ret != 0


def test_undecodable_bodies_are_errors_without_tracebacks(pytester, server, tmp_path):
    server.chat_fault = "bad_gzip"
    result = run_session(pytester, server, tmp_path)
    out = result.stdout.str() + result.stderr.str()
    assert "could not be decoded" in out, out[-3000:]
    assert "Traceback" not in out and "zlib" not in out.lower()
    assert len(out.splitlines()) < 200 and result.ret != 0
