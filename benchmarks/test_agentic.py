"""Agentic benchmarks (run with ``pytest benchmarks``; not part of the test suite).

- Memory prerequisites per backend: the 37 prerequisite conversations of the five scenarios,
  held by the oracle (which files every conversation in long-term memory), snapshots written.
  The key-value and summary backends measure the loop and the snapshot files; the vector one
  adds embedding what its searches need (the store's texts are embedded at the first search
  after they changed, not when stored).
- Embedding: one text at a time against one batch, and a scenario's snapshot reloaded by each
  of its questions (the batch is remembered after the first reload).
- All 155 questions of a memory category after the prerequisites, per backend.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from pytest_bfcl.backends.embedding import embedder
from pytest_bfcl.dataset.categories import MEMORY, MEMORY_SCENARIOS
from pytest_bfcl.dataset.fetch import resolve_data_source
from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.models.base import Generation
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.settings import Settings


def _forget_embeddings() -> None:
    """Start cold: drop the remembered batches (kept within a session, by design)."""
    if importlib.util.find_spec("sentence_transformers") is not None:
        embedder()._recent.clear()


def _run(category: str, directory: Path, session: str) -> BfclRun:
    settings = Settings(model="oracle", categories=category, memory_dir=directory)
    return BfclRun.create(settings, session=session)


@pytest.mark.parametrize("category", MEMORY)
def test_memory_prerequisites_per_backend(benchmark, category, tmp_path):
    if category == "memory_vector":
        pytest.importorskip("sentence_transformers")
        embedder().embed(["load the model outside the timed part"])
    rounds = iter(range(100))

    def prerequisites() -> int:
        _forget_embeddings()
        run = _run(category, tmp_path, f"round-{next(rounds)}")  # a new session each round
        flow = run.wiring.memory_flow()
        return sum(flow.final_snapshot(category, s) is not None for s in MEMORY_SCENARIOS)

    assert benchmark.pedantic(prerequisites, rounds=3, iterations=1) == 5


@pytest.mark.parametrize("category", MEMORY)
def test_memory_questions_per_backend(benchmark, category, tmp_path):
    if category == "memory_vector":
        pytest.importorskip("sentence_transformers")
    run = _run(category, tmp_path, "questions")
    for scenario in MEMORY_SCENARIOS:
        run.wiring.memory_flow().final_snapshot(category, scenario)
    ids = [e.id for e in run.entries_for(category)]

    def questions() -> int:
        _forget_embeddings()  # each round reloads every scenario's snapshot once, as a session
        return sum(run.score(g).valid for i in ids if isinstance(g := run.generate(i), Generation))

    assert benchmark.pedantic(questions, rounds=3, iterations=1) == 155


def test_embedding_one_by_one_against_one_batch(benchmark):
    pytest.importorskip("sentence_transformers")
    dataset = open_dataset(resolve_data_source(None))
    model = embedder()
    texts = [
        message.content
        for entry in dataset.memory_prerequisites("memory_vector", "customer")
        for turn in entry.question
        for message in turn
    ][:40]
    texts = [t[:2000] for t in texts]
    model.embed(["warm up"])
    started = time.perf_counter()
    for text in texts:
        model._model.encode([text], normalize_embeddings=True)
    one_by_one = time.perf_counter() - started
    started = time.perf_counter()
    model._model.encode(texts, normalize_embeddings=True)
    batch = time.perf_counter() - started
    print(
        f"\nembedding {len(texts)} texts: one by one {one_by_one:.2f} s, one batch {batch:.2f} s "
        f"(ratio {one_by_one / batch:.2f})"
    )

    def reload_snapshot() -> None:  # a question reloading a snapshot already embedded
        model.embed(texts)

    model.embed(texts)

    benchmark.pedantic(reload_snapshot, rounds=5, iterations=1)
