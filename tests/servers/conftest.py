"""The stand-in vLLM (``pytest_bfcl.testing.stand_in_vllm``) as most server tests start it;
a module that needs it to answer other categories, or on another route, has its own."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def stand_in(monkeypatch, tmp_path) -> Path:
    """The stand-in answering live_parallel; its starts are counted in the file returned."""
    starts = tmp_path / "starts.txt"
    monkeypatch.setenv("STANDIN_STARTS", str(starts))
    monkeypatch.setenv("STANDIN_CATEGORIES", "live_parallel")
    return starts
