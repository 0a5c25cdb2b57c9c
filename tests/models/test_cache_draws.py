"""The response cache keeps each entry's (and each sample's) answer apart: two entries that
send the same request get a draw each, as two independent runs of them would, and a rerun of
either is answered from the cache."""

from __future__ import annotations

import pytest

from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.models.base import Task
from pytest_bfcl.models.cache import ResponseCache
from pytest_bfcl.models.openai_chat import EndpointSettings, OpenAIChatModel
from pytest_bfcl.testing.fake_openai import FakeOpenAI


@pytest.fixture
def server(dataset):
    with FakeOpenAI(dataset, ["live_relevance"]) as fake:
        yield fake


def test_entries_sending_the_same_request_get_a_draw_each(server, dataset, texts, tmp_path):
    entry = dataset.entries("live_relevance")[0]
    twin = entry.model_copy(update={"id": "live_relevance_twin"})  # the same request, another id
    cache = ResponseCache(tmp_path / "cache")
    settings = EndpointSettings(model="test-model", base_urls=(server.base_url,))
    model = OpenAIChatModel(settings, ScoringOptions("fc", True), texts, cache=cache)
    try:
        assert model.build_request(Task(entry, None)) == model.build_request(Task(twin, None))
        first = model.generate(Task(entry, None))
        second = model.generate(Task(twin, None))
        resample = model.generate(Task(entry, None, sample=1))
        assert not (first.cached or second.cached or resample.cached)
        assert server.total_requests() == 3  # a request per entry and per sample
        assert len(list((tmp_path / "cache").rglob("*.json"))) == 3
        again = [model.generate(Task(e, None)) for e in (entry, twin)]
        assert all(g.cached for g in again) and server.total_requests() == 3
    finally:
        model.close()
