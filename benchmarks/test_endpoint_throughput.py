"""Throughput against an OpenAI-compatible server (run with ``pytest benchmarks``).

``simple_python`` plus ``multi_turn_base`` (600 entries) against a simulated server, in its own
process, that answers every request after a fixed 100 ms, at concurrency 32. Reported: wall
time, requests, the ideal (requests x latency / concurrency) and the ratio to it. Target: ratio
<= 1.3, with scores equal to the oracle's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from generation import served_requests, simulated_server

from pytest_bfcl.models.base import Generation
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.settings import Settings
from pytest_bfcl.testing.fake_openai import FakeOpenAI

CATEGORIES = ["simple_python", "multi_turn_base"]
LATENCY_S = 0.1
CONCURRENCY = 32
TARGET_RATIO = 1.3


@pytest.fixture
def server() -> Iterator[str]:
    with simulated_server(CATEGORIES, LATENCY_S) as url:
        yield url


def test_pipelined_generation_against_a_100ms_server(benchmark, server):
    oracle = BfclRun.create(Settings(model="oracle", categories=CATEGORIES))
    settings = Settings(
        model="bench-model",
        categories=CATEGORIES,
        base_urls=[server],
        concurrency=CONCURRENCY,
        no_cache=True,
    )
    run = BfclRun.create(settings)
    ids = [e.id for c in CATEGORIES for e in run.entries_for(c)]
    assert len(ids) == 600

    def generate_all() -> tuple[float, list[Generation]]:
        started = time.perf_counter()
        run.prefetch(ids)
        generations = [run.generation_for(i) for i in ids]
        elapsed = time.perf_counter() - started
        run.close()
        return elapsed, generations

    elapsed, generations = benchmark.pedantic(generate_all, rounds=1, iterations=1)
    requests = served_requests(server)
    ideal = requests * LATENCY_S / CONCURRENCY
    ratio = elapsed / ideal
    benchmark.extra_info.update(
        {"wall_s": round(elapsed, 2), "requests": requests, "ideal_s": round(ideal, 2),
         "ratio": round(ratio, 3)}
    )  # fmt: skip
    print(f"\n600 entries, {requests} requests: {elapsed:.2f}s, ideal {ideal:.2f}s, x{ratio:.2f}")
    # The simulated server tells conversations apart by their requests; a few entries start
    # with exactly the same request as another and get that one's answers.
    ambiguous = FakeOpenAI(oracle.dataset, CATEGORIES).ambiguous
    valid = {g.id: run.score(g).valid for g in generations if g.id not in ambiguous}
    expected = {i: oracle.score(oracle.generate(i)).valid for i in valid}
    assert valid == expected
    assert ratio <= TARGET_RATIO
