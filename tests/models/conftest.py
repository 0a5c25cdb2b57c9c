"""Fixtures shared by the endpoint client's tests: a fake endpoint answering the relevance
categories as the oracle does, and one of their entries to ask it."""

from __future__ import annotations

import pytest

from pytest_bfcl.models.base import Task
from pytest_bfcl.testing.fake_openai import FakeOpenAI

RELEVANCE_CATEGORIES = ["live_relevance", "live_irrelevance"]


@pytest.fixture
def server(dataset):
    with FakeOpenAI(dataset, RELEVANCE_CATEGORIES) as fake:
        yield fake


@pytest.fixture
def task(dataset):
    return Task(dataset.entries("live_relevance")[0], None)
