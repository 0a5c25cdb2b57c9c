"""How an xdist controller deals BFCL entries out to its workers."""

from __future__ import annotations

import pytest

pytest.importorskip("xdist")

from pytest_bfcl.xdist_schedule import SpreadScheduling


class FakeNode:
    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[int] = []
        self.shutting_down = False
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def scheduler(pytester: pytest.Pytester, nodeids: list[str], workers: int = 2, **options):
    config = pytester.parseconfig("--tx", f"{workers}*popen")
    sched = SpreadScheduling(config, prefix="bfcl/", **options)
    nodes = [FakeNode(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, nodeids)
    return sched, nodes


def test_bfcl_entries_are_dealt_out_whole_and_in_turns(pytester):
    ids = [f"bfcl/simple_python::simple_python_{i}" for i in range(7)]
    ids += [f"bfcl/multi_turn_base::multi_turn_base_{i}" for i in range(5)]
    sched, nodes = scheduler(pytester, ids)
    sched.schedule()
    assert nodes[0].sent == [0, 2, 4, 6, 8, 10] and nodes[1].sent == [1, 3, 5, 7, 9, 11]
    assert all(node.shutting_down for node in nodes)  # nothing is held back for later
    for node in nodes:
        for index in list(node.sent):
            sched.mark_test_complete(node, index)
    assert sched.tests_finished


def test_long_conversations_count_for_more_when_dealing(pytester):
    # Twelve single-turn entries, two conversations of six turns among the first three.
    ids = ["bfcl/multi_turn_base::multi_turn_base_0", "bfcl/simple_python::simple_python_0"]
    ids += ["bfcl/multi_turn_base::multi_turn_base_1"]
    ids += [f"bfcl/simple_python::simple_python_{i}" for i in range(1, 12)]
    turns = {nodeid: 6 for nodeid in ids if "multi_turn" in nodeid}
    sched, nodes = scheduler(pytester, ids, weight=lambda nodeid: turns.get(nodeid, 1))
    sched.schedule()
    assert nodes[0].sent == [0, 3, 4, 6, 8, 10, 12] and nodes[1].sent == [1, 2, 5, 7, 9, 11, 13]
    load = [sum(turns.get(ids[i], 1) for i in node.sent) for node in nodes]
    assert load == [12, 12]  # every N-th entry would have dealt 17 and 7


def test_odd_weights_deal_in_turns_and_more_workers_than_entries_is_fine(pytester):
    def broken(nodeid: str) -> int:
        raise ValueError(nodeid)

    ids = [f"bfcl/simple_python::simple_python_{i}" for i in range(5)]
    for weight in (lambda nodeid: 0, lambda nodeid: -3, broken):
        sched, nodes = scheduler(pytester, ids, weight=weight)
        sched.schedule()
        assert nodes[0].sent == [0, 2, 4] and nodes[1].sent == [1, 3]
    sched, nodes = scheduler(pytester, ids[:2], workers=4)
    sched.schedule()
    assert [node.sent for node in nodes] == [[0], [1], [], []]
    assert all(node.shutting_down for node in nodes)


def test_an_entry_weighs_the_requests_the_scheduler_expects_of_it():
    from pytest_bfcl.run.engine import BfclRun
    from pytest_bfcl.settings import Settings

    run = BfclRun.create(Settings(model="oracle", categories="simple_python,multi_turn_base"))
    conversation = run.entries_for("multi_turn_base")[0]
    assert run.expected_requests(conversation.id) == 2 * len(conversation.question) > 2
    assert run.expected_requests("simple_python_0") == 1
    assert run.expected_requests("simple_python_999999") == 1  # not in the data: the least
    assert run.expected_requests("not-an-id") == 1


def test_a_model_that_asks_no_server_deals_one_run_of_entries_per_worker(pytester):
    # Ten single-turn entries, then two conversations that weigh five each.
    ids = [f"bfcl/simple_python::simple_python_{i}" for i in range(10)]
    ids += [f"bfcl/multi_turn_base::multi_turn_base_{i}" for i in range(2)]
    weights = {nodeid: 5 for nodeid in ids if "multi_turn" in nodeid}
    sched, nodes = scheduler(
        pytester, ids, weight=lambda nodeid: weights.get(nodeid, 1), contiguous=True
    )
    sched.schedule()
    assert nodes[0].sent == list(range(10)) and nodes[1].sent == [10, 11]
    assert all(node.shutting_down for node in nodes)
    # three workers, equal weights: three runs of four
    sched, nodes = scheduler(pytester, ids, workers=3, contiguous=True)
    sched.schedule()
    assert [node.sent for node in nodes] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    # more workers than entries: each entry to the worker whose share its middle falls in
    sched, nodes = scheduler(pytester, ids[:2], workers=4, contiguous=True)
    sched.schedule()
    assert [node.sent for node in nodes] == [[], [0], [], [1]]
    assert all(node.shutting_down for node in nodes)


def test_scoring_weighs_an_item_and_a_conversation_s_turns():
    from pytest_bfcl.run.engine import BfclRun
    from pytest_bfcl.run.selection import ITEM_COST
    from pytest_bfcl.settings import Settings

    run = BfclRun.create(Settings(model="oracle", categories="simple_python,multi_turn_base"))
    conversation = run.entries_for("multi_turn_base")[0]
    cost = run.selection.scoring_cost
    assert cost(conversation.id) == ITEM_COST + 2 * len(conversation.question)
    assert cost("simple_python_0") == ITEM_COST + 1
    assert cost("not-an-id") == ITEM_COST + 1


def test_a_collection_with_other_tests_is_scheduled_as_xdist_does(pytester):
    ids = [f"bfcl/simple_python::simple_python_{i}" for i in range(40)] + ["test_x.py::test_y"]
    sched, nodes = scheduler(pytester, ids)
    sched.schedule()
    sent = nodes[0].sent + nodes[1].sent
    assert len(sent) < len(ids)  # xdist sends a first batch and keeps the rest
    assert nodes[0].sent == list(range(len(nodes[0].sent)))  # consecutive, as xdist sends


def test_a_crashed_workers_entries_go_to_its_replacement(pytester):
    ids = [f"bfcl/live_simple::live_simple_{i}-0-0" for i in range(10)]
    sched, nodes = scheduler(pytester, ids)
    sched.schedule()
    crashed = nodes[0]
    sched.mark_test_complete(crashed, crashed.sent[0])
    sched.remove_node(crashed)
    replacement = FakeNode("gw2")
    sched.add_node(replacement)
    sched.add_node_collection(replacement, ids)
    sched.schedule()
    for _ in range(len(ids)):  # the replacement runs what it is sent, and is sent more
        for index in [i for i in replacement.sent if i in sched.node2pending[replacement]]:
            sched.mark_test_complete(replacement, index)
    # Everything the crashed worker had left but the item it crashed on (reported as such).
    assert sorted(replacement.sent) == crashed.sent[2:]
    assert replacement.shutting_down
