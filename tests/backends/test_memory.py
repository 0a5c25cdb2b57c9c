"""Memory backends (limits, key rules, key search, snapshots, vector search with the real
embedding model) and the two-stage memory flow."""

from __future__ import annotations

import json
import threading

import pytest

from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.backends.memory import MemoryKV, MemoryRecSum, bm25_plus_ranking
from pytest_bfcl.dataset.models import Entry, Message
from pytest_bfcl.models.base import Generation
from pytest_bfcl.run.memory_flow import MemoryFlow, MemoryFlowError


def kv(snapshot=None) -> MemoryKV:
    env = Environment.create(["MemoryAPI_kv"], {"MemoryAPI_kv": {"snapshot": snapshot}})
    return env.instances["MemoryAPI_kv"]  # type: ignore[return-value]


# -- key-value ------------------------------------------------------------------------------------


def test_key_search_ranks_keys_by_bm25_plus():
    ranked = bm25_plus_ranking("user name", ["user_name", "user_age", "a_1"])
    assert ranked == [
        [4.1588830833596715, "user_name"],
        [2.772588722239781, "user_age"],
        [2.0794415416798357, "a_1"],
    ]


def test_key_search_keeps_insertion_order_on_ties_and_honours_k():
    ranked = bm25_plus_ranking("zebra", ["b_key", "a_key", "c_key"], k=2)
    assert [key for _, key in ranked] == ["b_key", "a_key"]


def test_key_search_on_an_empty_store_is_an_error_result():
    env = Environment.create(["MemoryAPI_kv"], {})
    result = env.execute_one("core_memory_key_search(query='x')")
    assert result.startswith("Error during execution:") and "division by zero" in result


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("user_name", True),
        ("a_1", True),
        ("a", True),
        ("a1", False),
        ("Bad Key", False),
        ("user__name", False),
        ("_user", False),
        ("user_", False),
        ("User", False),
    ],
)
def test_keys_must_be_snake_case(key, valid):
    result = kv().core_memory_add(key, "v")
    assert ("error" not in result) is valid, result


def test_core_memory_limits_in_the_documented_order():
    memory = kv()
    for i in range(7):
        assert memory.core_memory_add(f"k_{i}", "v") == {"status": "Key-value pair added."}
    # full is reported before a too-long value or a bad key
    assert memory.core_memory_add("Bad Key", "x" * 400) == {
        "error": "Core memory is full. Please clear some entries."
    }
    memory.core_memory_remove("k_0")
    assert memory.core_memory_add("k_9", "x" * 301)["error"].startswith("Entry is too long")
    assert "less than 300 characters" in memory.core_memory_add("k_9", "x" * 301)["error"]
    assert memory.core_memory_add("k_1", "again") == {"error": "Key name must be unique."}
    assert memory.core_memory_add("k_9", "x" * 300) == {"status": "Key-value pair added."}


def test_archival_memory_limits_and_messages():
    memory = kv()
    for i in range(50):
        assert memory.archival_memory_add(f"k_{i}", "v") == {"status": "Key added."}
    assert memory.archival_memory_add("k_x", "v") == {
        "error": "Long term memory is full. Please clear some entries."
    }
    assert memory.archival_memory_replace("k_1", "y" * 2001)["error"].endswith(
        "less than 2000 characters."
    )
    assert memory.archival_memory_replace("nope", "y") == {"error": "Key not found."}
    assert memory.archival_memory_replace("k_1", "y") == {"status": "Key replaced."}
    assert memory.archival_memory_retrieve("k_1") == {"value": "y"}
    assert memory.archival_memory_remove("k_1") == {"status": "Key removed."}
    assert memory.archival_memory_remove("k_1") == {"error": "Key not found."}
    assert len(memory.archival_memory_list_keys()["keys"]) == 49
    assert memory.archival_memory_clear() == {"status": "Long term memory cleared."}
    assert memory.archival_memory_list_keys() == {"keys": []}


def test_values_are_stored_as_text_and_results_render_as_json():
    env = Environment.create(["MemoryAPI_kv"], {})
    assert env.execute_one("core_memory_add(key='age', value=35)") == (
        '{"status": "Key-value pair added."}'
    )
    assert env.execute_one("core_memory_retrieve_all()") == '{"age": "35"}'
    assert env.execute_one("core_memory_clear()") == '{"status": "Short term memory cleared."}'


def test_kv_snapshot_round_trip_and_context_dump():
    memory = kv()
    assert memory._context_dump() == "There is no content in the core memory at this point."
    memory.core_memory_add("name", "Ada")
    memory.archival_memory_add("notes", "likes tea")
    restored = kv(json.loads(json.dumps(memory._snapshot())))
    assert restored.core_memory == {"name": "Ada"}
    assert restored.archival_memory == {"notes": "likes tea"}
    assert json.loads(restored._context_dump()) == {"name": "Ada"}


# -- recursive summary ----------------------------------------------------------------------------


def test_summary_limits_and_replacement():
    memory = MemoryRecSum()
    assert memory.memory_retrieve() == {"error": "Memory is empty."}
    assert memory._context_dump() == "There is no content in the memory at this point."
    assert memory.memory_append("a" * 9_999) == {"status": "Memory appended."}
    assert "after appending" in memory.memory_append("bb")["error"]
    assert memory.memory_update("x" * 10_001)["error"].startswith(
        "Entry will be too long after updating"
    )
    assert memory.memory_update("cat and cat") == {"status": "Memory updated."}
    assert memory.memory_replace("dog", "x") == {"error": "Text 'dog' not found in memory."}
    assert "after replacing" in memory.memory_replace("cat", "y" * 10_001)["error"]
    assert memory.memory_replace("cat", "owl") == {"status": "Memory updated."}
    assert memory.memory_retrieve() == {"memory_content": "owl and owl"}
    assert memory.memory_clear() == {"status": "Short term memory cleared."}


def test_summary_snapshot_must_hold_text():
    with pytest.raises(ValueError, match="holds text"):
        Environment.create(
            ["MemoryAPI_rec_sum"], {"MemoryAPI_rec_sum": {"snapshot": {"memory": 3}}}
        )


# -- vector (real embedding model) ---------------------------------------------------------------


@pytest.fixture(scope="module")
def vector_ready():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("faiss")
    from pytest_bfcl.backends.embedding import EmbeddingUnavailable, embedder

    try:
        return embedder()
    except EmbeddingUnavailable as exc:  # no offline copy of the model here
        pytest.skip(str(exc))


def vector(snapshot=None):
    env = Environment.create(["MemoryAPI_vector"], {"MemoryAPI_vector": {"snapshot": snapshot}})
    return env, env.instances["MemoryAPI_vector"]


def test_embeddings_are_unit_vectors_of_the_model_dimension(vector_ready):
    import numpy as np

    vectors = vector_ready.embed(["a cat sat on the mat", "stock prices fell"])
    assert vectors.shape == (2, vector_ready.dimension) == (2, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_vector_search_ranks_by_meaning(vector_ready):
    _, memory = vector()
    for text in [
        "My dog is called Rex.",
        "I work as a nurse in Boston.",
        "I love mango ice cream.",
    ]:
        memory.archival_memory_add(text)
    hits = memory.archival_memory_retrieve("What is my job?", top_k=2)["result"]
    assert len(hits) == 2
    assert hits[0]["text"] == "I work as a nurse in Boston." and hits[0]["id"] == 1
    assert hits[0]["similarity_score"] > hits[1]["similarity_score"]
    assert memory.archival_memory_retrieve("anything", top_k=10)["result"].__len__() == 3


def test_vector_store_limits_ids_and_errors(vector_ready):
    env, memory = vector()
    assert memory.core_memory_retrieve("x") == {"result": []}
    assert memory.core_memory_add("x" * 301) == {
        "error": "Entry length exceeds maximum length of 300 characters."
    }
    for i in range(7):
        assert memory.core_memory_add(f"fact {i}") == {"id": i}
    assert memory.core_memory_add("one more") == {
        "error": "Memory size exceeds maximum size of 7 entries."
    }
    assert memory.core_memory_remove(3) == {"status": "ID 3 removed from store."}
    assert memory.core_memory_remove(3) == {"error": "ID 3 not present in store."}
    assert memory.core_memory_update(9, "x") == {"error": "ID 9 not present in store."}
    assert memory.core_memory_update(4, "fact four, revised") == {"status": "ID 4 updated."}
    assert memory.core_memory_add("new") == {"id": 7}  # ids are never reused
    top = memory.core_memory_retrieve("fact four revised", top_k=1)["result"]
    assert top[0]["id"] == 4
    assert memory.core_memory_clear() == {"status": "Memory cleared."}
    assert memory.core_memory_add("again") == {"id": 0}
    assert env.execute_one("core_memory_add(text=5)").startswith("Error during execution:")


def test_vector_snapshot_round_trip_rebuilds_the_index(vector_ready):
    _, memory = vector()
    memory.archival_memory_add("The wedding is on June 3rd.")
    memory.archival_memory_add("Allergic to peanuts.")
    memory.archival_memory_remove(0)
    snapshot = json.loads(json.dumps(memory._snapshot()))  # ids become strings in JSON
    assert snapshot["archival_memory"] == {"next_id": 2, "store": {"1": "Allergic to peanuts."}}
    _, restored = vector(snapshot)
    hits = restored.archival_memory_retrieve("food allergy")["result"]
    assert [h["id"] for h in hits] == [1]
    assert restored.archival_memory_add("x") == {"id": 2}
    # the context dump always shows the core store as JSON, "{}" when empty
    assert restored._context_dump() == "{}"


def _index_contents(store):
    """The ids and vectors of a store's index, in index order (after the pending changes)."""
    import faiss

    index = store._current_index()
    ids = faiss.vector_to_array(index.id_map)
    return ids.tolist(), index.index.reconstruct_n(0, index.ntotal)


def _edit(memory) -> None:
    """Adds, an update of a text added alone, a removal from the restored batch, another add."""
    memory.archival_memory_add("Flight to Lisbon leaves at 7 am on Friday.")
    memory.archival_memory_add("Prefers aisle seats.")
    memory.archival_memory_update(3, "Prefers window seats on long flights.")
    memory.archival_memory_remove(0)
    memory.archival_memory_add("Daughter's recital is on the 12th.")


def test_vectors_made_at_search_time_are_those_of_each_change_as_it_happened(vector_ready):
    import numpy as np

    restored = ["Works night shifts at the hospital.", "Owns two cats."]
    snapshot = {
        "core_memory": {"next_id": 0, "store": {}},
        "archival_memory": {"next_id": 2, "store": {"0": restored[0], "1": restored[1]}},
    }
    _, memory = vector(snapshot)
    _edit(memory)
    assert len(memory.archival._unindexed) > 1  # nothing embedded yet
    ids, vectors = _index_contents(memory.archival)
    # What embedding every change at once gives, computed here without the store: the snapshot
    # as one batch (id 0 then removed), then each text added alone (id 3's first text replaced).
    expected = np.vstack([
        vector_ready.embed(restored)[1],
        vector_ready.embed(["Flight to Lisbon leaves at 7 am on Friday."])[0],
        vector_ready.embed(["Prefers window seats on long flights."])[0],
        vector_ready.embed(["Daughter's recital is on the 12th."])[0],
    ])  # fmt: skip
    assert ids == [1, 2, 3, 4]
    assert np.array_equal(vectors, expected)  # bit for bit (a vector depends on its batch)
    hits = memory.archival_memory_retrieve("when is the flight?", top_k=1)["result"]
    assert hits[0]["id"] == 2


def test_a_text_that_is_not_a_string_fails_when_stored(vector_ready):
    env, memory = vector()
    failed = env.execute_one("archival_memory_add(text=['likes tea', 'likes cats'])")
    assert failed.startswith("Error during execution:")
    assert memory.archival_memory_add("dog") == {"id": 1}  # the failed call used up id 0
    memory.archival_memory_update(1, "a dog called Rex")
    failed = env.execute_one("archival_memory_update(vec_id=1, new_text=['y'])")
    assert failed.startswith("Error during execution:")
    assert memory._snapshot()["archival_memory"]["store"] == {1: "a dog called Rex"}
    # as in the benchmark, the failed update took the old vector out of the index
    assert memory.archival_memory_retrieve("dog")["result"] == []
    json.dumps(memory._snapshot())  # nothing unwritable was stored


def test_storing_without_searching_embeds_nothing(vector_ready, monkeypatch):
    def no_embedding(texts):
        raise AssertionError(f"embedded {texts!r}")

    monkeypatch.setattr(vector_ready, "embed", no_embedding)
    _, memory = vector()
    memory.core_memory_add("Name: Ada.")
    memory.archival_memory_add("Lives in Porto.")
    memory.archival_memory_update(0, "Lives in Lisbon.")
    memory.archival_memory_remove(0)
    assert memory.archival._unindexed == []  # added alone and removed unsearched: no work left
    assert memory._snapshot()["core_memory"]["store"] == {0: "Name: Ada."}


# -- the memory flow -----------------------------------------------------------------------------


def prereq(scenario: str, k: int) -> Entry:
    return Entry(
        id=f"memory_kv_prereq_{k}-{scenario}-{k}",
        question=[[Message(role="user", content=f"fact {k}")]],
        involved_classes=["MemoryAPI_kv"],
        scenario=scenario,
    )


class CountingRunner:
    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[tuple[str, dict | None]] = []
        self.fail_on = fail_on
        self.lock = threading.Lock()

    def __call__(self, entry: Entry, snapshot):
        with self.lock:
            self.calls.append((entry.id, snapshot))
        if entry.id == self.fail_on:
            raise RuntimeError("server went away")
        facts = [*(snapshot or {}).get("facts", []), entry.id]
        return Generation(id=entry.id, result=[["ok"]]), {"facts": facts}


def test_prerequisites_run_once_in_order_and_leave_checkpoints(tmp_path):
    runner = CountingRunner()
    written = []
    flow = MemoryFlow(
        lambda cat, sc: [prereq(sc, 0), prereq(sc, 1), prereq(sc, 2)],
        runner,
        tmp_path,
        "session-1",
        lambda generation, category: written.append((generation.id, category)),
    )
    threads = [
        threading.Thread(target=flow.final_snapshot, args=("memory_kv", "student"))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = flow.final_snapshot("memory_kv", "student")
    ids = [p.id for p in (prereq("student", 0), prereq("student", 1), prereq("student", 2))]
    assert [c[0] for c in runner.calls] == ids  # once, in order, despite 7 callers
    assert runner.calls[0][1] is None and runner.calls[1][1] == {"facts": ids[:1]}
    assert final == {"facts": ids}
    snapshot_dir = tmp_path / "agentic" / "memory" / "kv" / "memory_snapshot"
    assert json.loads((snapshot_dir / "student_final.json").read_text()) == final
    assert json.loads((snapshot_dir / "prereq_checkpoints" / f"{ids[1]}.json").read_text()) == {
        "facts": ids[:2]
    }
    assert written == [(i, "memory_kv") for i in ids]


def test_another_worker_of_the_session_reads_the_snapshot_instead_of_rerunning(tmp_path):
    first, second, later = CountingRunner(), CountingRunner(), CountingRunner()
    chain = lambda cat, sc: [prereq(sc, 0), prereq(sc, 1)]  # noqa: E731
    MemoryFlow(chain, first, tmp_path, "session-1").final_snapshot("memory_kv", "finance")
    snapshot = MemoryFlow(chain, second, tmp_path, "session-1").final_snapshot(
        "memory_kv", "finance"
    )
    assert len(first.calls) == 2 and second.calls == []
    assert snapshot == {"facts": [c[0] for c in first.calls]}
    # a new session runs them again
    MemoryFlow(chain, later, tmp_path, "session-2").final_snapshot("memory_kv", "finance")
    assert len(later.calls) == 2


def test_a_failed_prerequisite_fails_every_question_of_the_scenario_once(tmp_path):
    runner = CountingRunner(fail_on="memory_kv_prereq_1-customer-1")
    flow = MemoryFlow(
        lambda cat, sc: [prereq(sc, 0), prereq(sc, 1), prereq(sc, 2)], runner, tmp_path, "s"
    )
    for _ in range(3):
        with pytest.raises(MemoryFlowError, match=r"memory_kv/customer failed.*server went away"):
            flow.final_snapshot("memory_kv", "customer")
    assert len(runner.calls) == 2  # not retried by every waiting question
    assert not (tmp_path / "agentic/memory/kv/memory_snapshot/customer_final.session").exists()


# -- a model's lone surrogates --------------------------------------------------------------------


def test_a_lone_surrogate_stored_in_memory_is_written_and_restored(tmp_path):
    env = Environment.create(["MemoryAPI_kv"], {})
    assert "added" in env.execute_one("core_memory_add(key='name', value='Ada \\ud800')")
    snapshot = env.instances["MemoryAPI_kv"]._snapshot()

    def runner(entry, previous):
        return Generation(id=entry.id, result=[["ok"]]), snapshot

    flow = MemoryFlow(lambda cat, sc: [prereq(sc, 0)], runner, tmp_path, "session-1")
    final = flow.final_snapshot("memory_kv", "student")
    assert final == snapshot
    written = next(tmp_path.rglob("student_final.json"))
    # another worker of the session reads the written snapshot back
    again = MemoryFlow(lambda cat, sc: [prereq(sc, 0)], runner, tmp_path, "session-1")
    assert again.final_snapshot("memory_kv", "student") == snapshot
    assert "\\ud800" in written.read_text("ascii")  # escaped, the file is plain text
    restored = kv(json.loads(written.read_text("utf-8")))
    assert restored.core_memory == {"name": "Ada \ud800"}
    assert "\\ud800" in restored._context_dump()  # the model sees it as the reference shows it


def test_a_lone_surrogate_is_embedded_as_a_replacement_character(vector_ready):
    import numpy as np

    vectors = vector_ready.embed(["tea \ud800", "tea \ufffd"])
    assert np.allclose(vectors[0], vectors[1], atol=1e-5)  # one batch: equal up to padding


def test_snapshots_that_cannot_be_written_are_one_warning_and_the_flow_goes_on(tmp_path):
    from pytest_bfcl.files import DiskWarning

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    runner = CountingRunner()
    chain = lambda cat, sc: [prereq(sc, 0), prereq(sc, 1)]  # noqa: E731
    flow = MemoryFlow(chain, runner, blocker / "results", "session-1")
    with pytest.warns(DiskWarning) as caught:
        first = flow.final_snapshot("memory_kv", "student")
        second = flow.final_snapshot("memory_kv", "finance")
    assert first == {"facts": [prereq("student", k).id for k in range(2)]}
    assert second is not None and len(runner.calls) == 4
    assert len(caught) == 1 and "cannot write the memory snapshots at" in str(caught[0].message)


def test_a_failed_snapshot_write_leaves_no_marker_for_other_workers(tmp_path, monkeypatch):
    import errno

    import pytest_bfcl.run.memory_flow as memory_flow
    from pytest_bfcl.files import DiskWarning

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(memory_flow, "write_json_atomic", full)
    flow = MemoryFlow(lambda cat, sc: [prereq(sc, 0)], CountingRunner(), tmp_path, "session-1")
    with pytest.warns(DiskWarning, match=r"\[Errno 28\] No space left on device \(ENOSPC\)"):
        assert flow.final_snapshot("memory_kv", "student") == {"facts": [prereq("student", 0).id]}
    assert not list(tmp_path.rglob("*.session"))  # a later worker runs them itself
