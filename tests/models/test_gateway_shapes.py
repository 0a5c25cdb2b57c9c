"""Gateways' and providers' answer shapes end as the right outcome: an upstream failure
inside a 200 is infrastructure (retried, never cached or scored); a provider's content filter
is the model's failure, as the leaderboard scores it; a quota that no wait lifts stops the run.
The table is in docs/run-integrity.md."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.check.oversized import oversized_answer_verdict
from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.models.cache import ResponseCache, cache_key
from pytest_bfcl.models.openai_chat import (
    EndpointSettings,
    InferenceError,
    OpenAIChatModel,
    ServerDown,
)
from pytest_bfcl.scoring import PROMPT_FILTERED, PROMPT_FILTERED_ERROR_TYPE
from pytest_bfcl.testing.gateway_faults import QUOTA_MESSAGE, UPSTREAM_ERROR

UPSTREAM_SHAPES = ["choice_error", "finish_error", "error_beside"]


def model_for(fake, texts, cache=None, **overrides) -> OpenAIChatModel:
    settings = {"model": "test-model", "base_urls": (fake.base_url,), "backoff": 0.01}
    settings.update(overrides)
    return OpenAIChatModel(
        EndpointSettings(**settings), ScoringOptions("fc", True), texts, cache=cache
    )


def cached_files(tmp_path):
    return list((tmp_path / "cache").rglob("*.json"))


@pytest.mark.parametrize("fault", UPSTREAM_SHAPES)
def test_an_upstream_failure_inside_a_200_is_retried_not_the_models(
    server, texts, task, fault, tmp_path
):
    server.faults = {task.entry.id: [fault]}
    generation = model_for(server, texts, cache=ResponseCache(tmp_path / "cache")).generate(task)
    assert server.requests[task.entry.id] == 2  # retried like a 5xx
    assert isinstance(generation.result, list) and generation.result  # the real answer
    assert len(cached_files(tmp_path)) == 1


@pytest.mark.parametrize("fault", UPSTREAM_SHAPES)
def test_a_gateway_failing_in_its_choices_is_an_error_and_the_rerun_asks_again(
    server, texts, task, fault, tmp_path
):
    server.faults = {task.entry.id: [fault] * 10}
    cache = ResponseCache(tmp_path / "cache")
    with pytest.raises(InferenceError) as raised:
        model_for(server, texts, cache=cache, retries=2).generate(task)
    message = str(raised.value)
    assert "answered 200 with" in message and "\n" not in message
    if fault != "finish_error":
        assert UPSTREAM_ERROR["message"] in message
    else:
        assert 'finish_reason "error"' in message
    assert not cached_files(tmp_path)
    server.faults = {}  # the gateway recovers: the rerun asks, and gets the answer
    before = server.total_requests()
    again = model_for(server, texts, cache=cache).generate(task)
    assert not again.cached and isinstance(again.result, list)
    assert server.total_requests() == before + 1


def test_a_gateway_error_cached_by_an_older_version_is_a_miss(server, texts, task, tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    model = model_for(server, texts, cache=cache)
    key = cache_key(model.cache_identity(model.build_request(task), entry=task.entry.id))
    stored = {"result": "", "tool_call_ids": [], "finish_reason": "error"}
    cache.put(key, stored)
    with pytest.warns(UserWarning, match="server's failure"):
        generation = model.generate(task)
    assert not generation.cached and server.requests[task.entry.id] == 1
    assert json.loads(cached_files(tmp_path)[0].read_text())["finish_reason"] == "stop"


def test_a_content_filtered_answer_is_the_models_and_scored(server, texts, task, tmp_path):
    server.faults = {task.entry.id: ["content_filter"]}
    cache = ResponseCache(tmp_path / "cache")
    generation = model_for(server, texts, cache=cache).generate(task)
    assert server.requests[task.entry.id] == 1  # an answer: not retried
    assert generation.result == "" and generation.finish_reason == "content_filter"
    assert len(cached_files(tmp_path)) == 1  # the model as served answered so


def test_a_prompt_refused_by_the_content_filter_is_the_models_failure_not_cached(
    server, texts, task, tmp_path
):
    server.faults = {task.entry.id: ["prompt_filter"]}
    cache = ResponseCache(tmp_path / "cache")
    model = model_for(server, texts, cache=cache)
    generation = model.generate(task)
    assert server.requests[task.entry.id] == 1
    assert generation.finish_reason == PROMPT_FILTERED
    assert "content filter" in generation.result and "content management policy" in (
        generation.result
    )
    verdict = oversized_answer_verdict(generation, "live_relevance")
    assert verdict is not None and not verdict.valid
    assert verdict.error_type == PROMPT_FILTERED_ERROR_TYPE
    assert not cached_files(tmp_path) and model.down_reason is None


def test_a_used_up_quota_stops_the_run_at_once(server, texts, task):
    server.chat_fault = "quota"
    model = model_for(server, texts, retries=6)
    with pytest.raises(ServerDown) as raised:
        model.generate(task)
    message = str(raised.value)
    assert QUOTA_MESSAGE in message and "quota is used up" in message and "\n" not in message
    assert server.total_requests() <= 2
    with pytest.raises(ServerDown):
        model.generate(task)
