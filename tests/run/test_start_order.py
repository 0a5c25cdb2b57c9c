"""The order generation starts entries in: longest first, alternating with pytest's own order,
so that the first results reach the terminal at once while long conversations still start
early."""

from __future__ import annotations

from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.run.scheduler import interleaved, start_order
from pytest_bfcl.settings import Settings


def test_longest_first_alternates_with_the_items_order():
    ids = ["s1", "s2", "s3", "s4", "m1", "m2"]
    length = {"m1": 9, "m2": 8}
    order = interleaved(ids, lambda i: (-length.get(i, 1), ids.index(i)))
    assert order == ["m1", "s1", "m2", "s2", "s3", "s4"]
    assert interleaved([], str) == []


def test_on_a_run_the_first_items_start_first_and_every_conversation_in_the_first_half():
    run = BfclRun.create(
        Settings(model="oracle", categories="simple_python,multi_turn_base,multi_turn_long_context")
    )
    ids = [e.id for c in run.settings.categories for e in run.entries_for(c)]
    order = interleaved(ids, lambda i: start_order(run.entry(i)))
    assert sorted(order) == sorted(ids)
    assert order[1::2][:50] == ids[:50]  # pytest's first items, every other start
    conversations = [i for i in ids if i.startswith("multi_turn")]
    last = max(order.index(i) for i in conversations)
    assert last < 2 * len(conversations) <= len(ids)


def test_ready_says_whether_asking_for_a_result_would_wait():
    import threading

    from pytest_bfcl.run.scheduler import Scheduler

    release = threading.Event()

    def generate(entry_id: str) -> str:
        if entry_id == "slow":
            release.wait(10)
        return entry_id.upper()

    scheduler = Scheduler(generate, str, concurrency=2)
    assert scheduler.ready("never-prefetched")  # generated on the spot
    scheduler.prefetch(["fast", "slow"])
    assert scheduler.result("fast") == "FAST"
    assert not scheduler.ready("slow")
    release.set()
    assert scheduler.result("slow") == "SLOW"
    scheduler.close()
