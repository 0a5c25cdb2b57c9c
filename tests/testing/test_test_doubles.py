"""The test doubles the suite and the benchmarks lean on (pytest_bfcl/testing/): a fake
endpoint that answers as the oracle, and result files in the leaderboard's layout. A double
that quietly answered otherwise would make the tests built on it prove nothing."""

from __future__ import annotations

import json

import pytest
import requests

from pytest_bfcl.testing.entry_match import conversation_position, question_key
from pytest_bfcl.testing.fake_openai import FakeOpenAI
from pytest_bfcl.testing.result_files import write_oracle_results


def test_a_conversation_position_counts_user_turns_and_steps_since_the_last():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": None},
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": None},
        # prompting mode feeds tool results back as a user message: not a new turn
        {"role": "user", "content": "[{'role': 'tool', 'content': 'ok'}]"},
    ]
    assert conversation_position(messages[:2]) == (0, 0)
    assert conversation_position(messages[:5]) == (0, 2)
    assert conversation_position(messages) == (1, 1)


def test_a_question_key_ignores_the_system_prompt_only():
    user = {"role": "user", "content": "hi"}
    assert question_key([{"role": "system", "content": "a"}, user]) == question_key([user])
    assert question_key([user]) != question_key([{"role": "user", "content": "hello"}])


def test_the_fake_endpoint_answers_an_entry_with_the_oracle_call_and_counts_it(dataset):
    entry = dataset.entries("simple_python")[0]
    body = {
        "model": "test-model",
        "messages": [m.model_dump() for m in entry.question[0]],
    }
    with FakeOpenAI(dataset, ["simple_python"]) as fake:
        answered = requests.post(f"{fake.base_url}/chat/completions", json=body, timeout=30)
        assert fake.total_requests() == 1 and fake.requests[entry.id] == 1
    answered.raise_for_status()
    call = answered.json()["choices"][0]["message"]["tool_calls"][0]["function"]
    expected = dataset.answers("simple_python")[entry.id].ground_truth[0]
    assert call["name"] == next(iter(expected))
    assert set(json.loads(call["arguments"])) <= set(next(iter(expected.values())))


def test_oracle_result_files_spoil_and_drop_what_they_are_told(dataset, tmp_path):
    entries = dataset.entries("simple_python")
    spoiled, dropped = entries[0].id, entries[1].id
    path = write_oracle_results(
        tmp_path, dataset, "simple_python", spoil={spoiled: "no call"}, drop={dropped}
    )
    records = {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}
    assert len(records) == len(entries) - 1 and dropped not in records
    assert records[spoiled]["result"] == "no call"
    assert isinstance(records[entries[2].id]["result"], list)


@pytest.mark.parametrize(
    "ids",
    [
        ("simple_python_4", "multiple_96"),  # one function, or the same among several
        ("simple_python_14", "live_irrelevance_793-302-0"),  # or with none that fits
    ],
)
def test_entries_sharing_a_question_are_told_apart_by_their_functions(dataset, ids):
    entries = {e.id: e for c in ("simple_python", "multiple", "live_irrelevance")
               for e in dataset.entries(c) if e.id in ids}  # fmt: skip
    questions = {json.dumps([m.model_dump() for m in e.question[0]]) for e in entries.values()}
    assert len(entries) == 2 and len(questions) == 1  # the same request but for its functions
    with FakeOpenAI(dataset, ["simple_python", "multiple", "live_irrelevance"]) as fake:
        for entry_id in reversed(ids):  # not in the order the server read them
            entry = entries[entry_id]
            tools = [
                {"type": "function", "function": {"name": d.name.replace(".", "_"),
                 "description": d.description, "parameters": d.parameters.model_dump()}}
                for d in entry.function
            ]  # fmt: skip
            body = {"model": "test-model", "tools": tools,
                    "messages": [m.model_dump() for m in entry.question[0]]}  # fmt: skip
            requests.post(f"{fake.base_url}/chat/completions", json=body, timeout=30)
        assert {i: fake.requests[i] for i in ids} == dict.fromkeys(ids, 1)


def test_conversations_sharing_a_first_message_are_told_apart_by_turns_and_functions(dataset):
    from pytest_bfcl.models.base import Task
    from pytest_bfcl.testing.entry_match import asked_conversation

    def body(entry, turns, extra_turn=None):
        users = [{"role": "user", "content": entry.question[t][-1].content} for t in turns]
        users += [{"role": "user", "content": extra_turn}] if extra_turn else []
        tools = [{"type": "function", "function": {"name": d.name}} for d in entry.function]
        return {"messages": users, "tools": tools}

    def pairs(category):
        base = {e.id: e for e in dataset.entries("multi_turn_base")}
        for entry in dataset.entries(category):
            original = base[entry.id.replace(category, "multi_turn_base")]
            if entry.question[0] == original.question[0]:  # the same first message
                yield original, entry

    # a function held back: fewer functions offered, then a turn that adds them
    original, missing = next(pairs("multi_turn_miss_func"))
    tasks = [Task(original, None), Task(missing, None)]
    assert asked_conversation(tasks, body(original, [0])).entry.id == original.id
    assert asked_conversation(tasks, body(missing, [0])).entry.id == missing.id
    at = int(next(iter(missing.held_out_functions)))
    added = body(missing, range(at), extra_turn="(the harness adds the functions here)")
    added["tools"] = body(original, [0])["tools"]  # every function offered by now
    assert asked_conversation(tasks, added).entry.id == missing.id
    # a parameter held back: a later turn asks otherwise
    original, vaguer = next(
        (o, e) for o, e in pairs("multi_turn_miss_param") if o.question != e.question
    )
    turn = next(t for t, q in enumerate(original.question) if q != vaguer.question[t])
    tasks = [Task(original, None), Task(vaguer, None)]
    assert asked_conversation(tasks, body(vaguer, range(turn + 1))).entry.id == vaguer.id
    assert asked_conversation(tasks, body(original, range(turn + 1))).entry.id == original.id
