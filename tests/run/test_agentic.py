"""The agentic answer checker, the conversation set-up of agentic entries, and the agentic
categories end to end (oracle, all 665 entries, web search replayed from a cassette)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from pytest_bfcl.check.agentic import evaluate_agentic, final_message, normalize_answer
from pytest_bfcl.dataset.models import AgenticAnswer
from pytest_bfcl.models.base import StepReply, StepRequest, Task
from pytest_bfcl.run.conversation import Conversation
from pytest_bfcl.testing.fake_web import FakeWeb


def check(message, expected, mode="fc"):
    entry_answer = AgenticAnswer(id="web_search_0", ground_truth=expected)
    return evaluate_agentic(_entry(), entry_answer, [[{"f": "{}"}, message]], mode)


def _entry():
    from pytest_bfcl.dataset.models import Entry, Message

    return Entry(id="web_search_base_0", question=[[Message(role="user", content="q")]])


# -- normalisation and matching ------------------------------------------------------------------


def test_normalisation_drops_punctuation_keeps_spaces_and_swaps_quotes():
    assert normalize_answer("U.S.A. (It's) 1,000-2/3 *x^_y") == 'usa it"s 100023 xy'


@pytest.mark.parametrize(
    ("message", "expected", "valid"),
    [
        ("I am 350", ["35"], False),  # inside a longer number
        ("The answer is 7.", ["7"], True),
        ("It is the U.S.A", ["USA"], True),
        ("New-York", ["new york"], False),  # the dash goes, leaving "newyork"
        ("{'answer': 'Paris', 'context': 'capital'}", ["paris"], True),
        ("Answer: Lyon", ["Paris", "Lyon"], True),  # any expected answer will do
        ("cost: $5", ["$5"], False),  # "$" is no word character: no boundary before it
    ],
)
def test_word_boundary_match_after_normalisation(message, expected, valid):
    verdict = check(message, expected)
    assert verdict.valid is valid
    if not valid:
        assert verdict.error_type == "agentic:answer_not_found"
        assert any("normalised message" in line for line in verdict.report or [])


def test_the_last_non_call_step_is_the_final_message():
    steps = ["first thoughts", [{"search_engine_query": '{"keywords": "x"}'}], "final: 42"]
    assert final_message(steps, "fc") == "final: 42"
    # a call after the text does not hide it
    assert final_message(["final: 42", [{"f": "{}"}]], "fc") == "final: 42"
    # prompting: text that decodes to calls is a call step
    assert final_message(["[f(a=1)]", "it is 42"], "prompt") == "it is 42"


def test_no_answer_and_malformed_results():
    entry, answer = _entry(), AgenticAnswer(id="w", ground_truth=["42"])
    only_calls = evaluate_agentic(entry, answer, [[[{"f": "{}"}]]], "fc")
    assert only_calls.error_type == "agentic:no_last_message"
    empty_text = evaluate_agentic(entry, answer, [[[{"f": "{}"}], ""]], "fc")
    assert empty_text.error_type == "agentic:no_last_message"  # an empty answer is no answer
    two_turns = evaluate_agentic(entry, answer, [["42"], ["42"]], "fc")
    assert two_turns.error_type == "agentic:inference_error"
    error_text = evaluate_agentic(entry, answer, "Error during inference: boom", "fc")
    assert error_text.error_type == "agentic:inference_error"


def test_agrees_with_every_reference_verdict_of_the_agentic_corpus(dataset, reference_dir):
    corpus = reference_dir / "corpus2"
    verdicts = {}
    for line in (corpus / "verdicts2.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["set"] == "a":
            verdicts[record["id"]] = record
    seen = 0
    for path in sorted((corpus / "a0").rglob("*_result.json")):
        for line in path.read_text().splitlines():
            stored = json.loads(line)
            expected = verdicts[stored["id"]]
            category = expected["category"]
            entry = dataset.entry_map(category)[stored["id"]]
            verdict = evaluate_agentic(
                entry, dataset.answers(category)[entry.id], stored["result"], "fc"
            )
            assert (verdict.valid, verdict.error_type) == (
                expected["ref_pass"],
                expected["ref_error_type"],
            ), stored["id"]
            seen += 1
    assert seen == len(verdicts) == 665


# -- conversation set-up -------------------------------------------------------------------------


class Recorder:
    """A step model that answers at once and keeps what it was sent."""

    def __init__(self) -> None:
        self.requests: list[StepRequest] = []

    def step(self, request: StepRequest) -> StepReply:
        self.requests.append(request)
        return StepReply(result="{'answer': 'x', 'context': 'y'}")


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_memory_question_system_message_order(dataset, texts, mode):
    entry = dataset.entries("memory_kv")[0]
    model = Recorder()
    snapshot = {"core_memory": {"name": "Michael"}, "archival_memory": {}}
    Conversation(
        Task(entry, None),
        model,
        mode,
        texts,
        initial_config={"MemoryAPI_kv": {"snapshot": snapshot}},
    ).run()
    system = model.requests[0].messages[0]
    assert system["role"] == "system"
    content = system["content"]
    persona = texts.memory_personas[entry.scenario]
    memory_at = content.index(persona)
    assert '"name": "Michael"' in content  # the core memory is shown to the model
    assert content.index(texts.agentic_answer_format) > memory_at  # answer format last
    if mode == "prompt":
        assert memory_at > 0  # the function prompt comes first
        assert "archival_memory_add" in content[:memory_at]
    else:
        assert content.startswith(persona)
    assert sum(m["role"] == "system" for m in model.requests[0].messages) == 1


def test_prerequisites_get_no_answer_format_and_web_search_no_memory(dataset, texts):
    prereq = dataset.memory_prerequisites("memory_rec_sum", "student")[0]
    model = Recorder()
    Conversation(Task(prereq, None), model, "fc", texts).run()
    first = model.requests[0].messages[0]["content"]
    assert texts.agentic_answer_format not in first
    assert "There is no content in the memory at this point." in first
    web = dataset.entries("web_search_no_snippet")[0]
    model = Recorder()
    Conversation(Task(web, None), model, "fc", texts).run()
    assert model.requests[0].messages[0] == {
        "role": "system",
        "content": texts.agentic_answer_format,
    }


# -- end to end ----------------------------------------------------------------------------------


def test_oracle_passes_every_agentic_category_offline(pytester, data_source, tmp_path):
    """Record the web from a local server into a cassette, then run all 665 agentic entries
    with web search replayed from it (the server is gone by then)."""
    cassette = tmp_path / "cassette"
    common = [
        f"--bfcl-data={data_source.data_dir}",
        "-p",
        "no:cacheprovider",
        "--bfcl-model=oracle",
    ]
    with FakeWeb() as web:
        recorded = pytester.runpytest(
            *common,
            "--bfcl-category=web_search",
            "--bfcl-web=record",
            f"--bfcl-web-cassette={cassette}",
            "--bfcl-web-provider=serpapi",
            f"--bfcl-web-search-url={web.search_url}",
            "--bfcl-web-allow-private",
        )
        recorded.assert_outcomes(passed=200)
        assert web.requests["search"] >= 100 and web.requests["page"] >= 100
    report = tmp_path / "report.json"
    vector = importlib.util.find_spec("sentence_transformers") is not None
    categories = "agentic" if vector else "memory_kv,memory_rec_sum,web_search"
    result = pytester.runpytest(
        *common,
        f"--bfcl-category={categories}",
        "--bfcl-web=replay",
        f"--bfcl-web-cassette={cassette}",
        f"--bfcl-results-dir={tmp_path / 'results'}",
        f"--bfcl-report={report}",
    )
    scores = json.loads(report.read_text())["categories"]
    backends = ("kv", "vector", "rec_sum") if vector else ("kv", "rec_sum")
    for backend in backends:
        assert scores[f"memory_{backend}"]["total"] == 155
    for name in ("web_search_base", "web_search_no_snippet"):
        assert scores[name]["total"] == 100
    assert all(s["accuracy"] >= 0.95 for s in scores.values()), scores
    result.assert_outcomes(passed=200 + 155 * len(backends))
    memory = tmp_path / "results" / "oracle" / "agentic" / "memory"
    for backend in backends:
        snapshots = memory / backend / "memory_snapshot"
        assert len(list((snapshots / "prereq_checkpoints").glob("*.json"))) == 37
        assert {p.name for p in snapshots.glob("*_final.json")} == {
            f"{s}_final.json" for s in ("student", "customer", "finance", "healthcare", "notetaker")
        }
        prereq_results = memory / backend / f"BFCL_v4_memory_{backend}_prereq_result.json"
        assert len(prereq_results.read_text().splitlines()) == 37
    kv_final = json.loads((memory / "kv" / "memory_snapshot" / "student_final.json").read_text())
    assert kv_final["core_memory"] and len(kv_final["archival_memory"]) == 10


def test_replay_scores_stored_agentic_results_like_the_reference(pytester, reference_dir):
    stored = reference_dir / "corpus2" / "a0" / "gpt-4.1-2025-04-14-FC"
    verdicts = [json.loads(line) for line in (reference_dir / "corpus2" / "verdicts2.jsonl").open()]
    expected = {}
    for v in verdicts:
        if v["set"] == "a":
            expected[v["category"]] = expected.get(v["category"], 0) + int(v["ref_pass"])
    report = pytester.path / "r.json"
    pytester.runpytest(
        f"--bfcl-model=replay:{stored}",
        "--bfcl-category=agentic",
        f"--bfcl-report={report}",
        "-p",
        "no:cacheprovider",
    )
    scores = json.loads(report.read_text())["categories"]
    assert {name: s["correct"] for name, s in scores.items()} == expected
    assert all(s["total"] == s["dataset_size"] for s in scores.values())


def test_memory_questions_start_interleaved_by_scenario(data_source):
    from pytest_bfcl.run.engine import BfclRun
    from pytest_bfcl.settings import Settings

    run = BfclRun.create(
        Settings(model="oracle", categories="memory_kv", data_dir=data_source.data_dir)
    )
    from pytest_bfcl.run.scheduler import start_order

    ids = [e.id for e in sorted(run.entries_for("memory_kv"), key=start_order)]
    first_wave = {i.split("-")[1] for i in ids[:5]}
    assert first_wave == {"student", "customer", "finance", "healthcare", "notetaker"}
