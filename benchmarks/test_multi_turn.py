"""Multi-turn benchmarks (run with ``pytest benchmarks``; not part of the test suite).

- Checking all 800 multi-turn entries: decoding every step, executing the model's and the
  ground truth's calls on fresh backends, comparing state and results (outputs are the oracle's
  own conversations, generated once outside the timed part).
- Holding the 800 oracle conversations through the loop (message building, decoding, execution
  against the inference backends).
"""

from __future__ import annotations

from pytest_bfcl.dataset.categories import expand_categories
from pytest_bfcl.models.base import Generation
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.settings import Settings

MULTI_TURN = expand_categories("multi_turn")


def _oracle_run() -> BfclRun:
    return BfclRun.create(Settings(model="oracle", categories=MULTI_TURN))


def test_check_all_multi_turn_entries(benchmark):
    run = _oracle_run()
    generations = [
        g
        for category in MULTI_TURN
        for e in run.entries_for(category)
        if isinstance(g := run.generate(e.id), Generation)
    ]
    assert len(generations) == 800

    def check_all() -> int:
        return sum(run.score(g).valid for g in generations)

    assert benchmark.pedantic(check_all, rounds=3, iterations=1) == 800


def test_oracle_conversations_through_the_loop(benchmark):
    run = _oracle_run()
    ids = [e.id for category in MULTI_TURN for e in run.entries_for(category)]

    def converse() -> int:
        return sum(isinstance(run.generate(i), Generation) for i in ids)

    assert benchmark.pedantic(converse, rounds=3, iterations=1) == 800
