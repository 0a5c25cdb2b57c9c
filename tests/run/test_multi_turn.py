"""Multi-turn: agreement with the reference verdicts, the oracle through the conversation loop,
the checker's rules, and the loop's message forms."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from pytest_bfcl.check.multi_turn import MultiTurnOptions, evaluate_multi_turn
from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.dataset.categories import expand_categories
from pytest_bfcl.dataset.models import Entry, MultiTurnAnswer
from pytest_bfcl.models.base import Generation, StepReply, StepRequest, Task
from pytest_bfcl.report.render import explain_failure
from pytest_bfcl.run.conversation import Conversation
from pytest_bfcl.run.engine import BfclRun, Skip, make_model
from pytest_bfcl.settings import Settings

MULTI_TURN = expand_categories("multi_turn")


def _run(dataset, model: str, mode: str) -> BfclRun:
    settings = Settings(model=model, mode=mode, categories=list(MULTI_TURN))
    scoring = ScoringOptions(mode, mode == "fc")
    return BfclRun(settings, dataset, make_model(settings.model, scoring))


def _disagreements(run: BfclRun, reference: dict[str, dict]) -> tuple[int, list]:
    checked, out = 0, []
    for category in MULTI_TURN:
        for entry in run.entries_for(category):
            generation = run.generate(entry.id)
            assert isinstance(generation, Generation), generation
            verdict = run.score(generation)
            ref = reference[entry.id]
            checked += 1
            if verdict.valid != ref["ref_pass"] or (
                not verdict.valid and verdict.error_type != ref["ref_error_type"]
            ):
                out.append((entry.id, ref["kind"], ref["ref_error_type"], verdict.error_type))
    return checked, out


def _verdicts(path, **match: Any) -> dict[str, dict]:
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if all(record.get(k) == v for k, v in match.items()):
            out[record["id"]] = record
    return out


# -- agreement with the reference ---------------------------------------------------------------


@pytest.mark.parametrize("variant", [0, 1])
def test_function_calling_corpus_agrees(dataset, reference_dir, variant):
    reference = _verdicts(reference_dir / "corpus" / "verdicts.jsonl", variant=variant)
    run = _run(dataset, f"replay:{reference_dir / 'corpus' / f'v{variant}'}", "fc")
    checked, disagreements = _disagreements(run, reference)
    assert checked == 800
    assert disagreements == [], Counter(kind for _, kind, _, _ in disagreements)


def test_prompting_corpus_agrees(dataset, reference_dir):
    reference = _verdicts(reference_dir / "corpus2" / "verdicts2.jsonl", set="p", variant=0)
    run = _run(dataset, f"replay:{reference_dir / 'corpus2' / 'p0'}", "prompt")
    checked, disagreements = _disagreements(run, reference)
    assert checked == 800
    assert disagreements == [], Counter(kind for _, kind, _, _ in disagreements)


# -- the oracle through the loop ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_oracle_passes_every_multi_turn_entry(dataset, mode):
    run = _run(dataset, "oracle", mode)
    failures, steps = [], 0
    for category in MULTI_TURN:
        for entry in run.entries_for(category):
            generation = run.generate(entry.id)
            assert not isinstance(generation, Skip)
            steps += generation.steps or 0
            verdict = run.score(generation)
            if not verdict.valid:
                failures.append((entry.id, verdict.error_type))
    assert failures == []
    assert steps > 800 * 3  # several turns each: one call step and one answer step per call turn


# -- checker rules ------------------------------------------------------------------------------


def _entry(turns: int = 2) -> Entry:
    return Entry(
        id="multi_turn_base_9000",
        question=[[{"role": "user", "content": f"turn {i}"}] for i in range(turns)],
        involved_classes=["GorillaFileSystem"],
        initial_config={
            "GorillaFileSystem": {"root": {"r": {"type": "directory", "contents": {}}}}
        },
    )


def _calls(*names: str) -> list[dict[str, str]]:
    out = []
    for text in names:
        name, _, rest = text.partition(":")
        out.append({name: rest or "{}"})
    return out


def _check(result: Any, truth: list[list[str]], strict: bool = False):
    entry = _entry(len(truth))
    answer = MultiTurnAnswer(id=entry.id, ground_truth=truth)
    return evaluate_multi_turn(entry, answer, result, MultiTurnOptions("fc", strict=strict))


def test_checker_outcomes():
    truth = [["mkdir(dir_name='a')"], ["ls()"]]
    ok = [[_calls('mkdir:{"dir_name": "a"}'), "done"], [_calls("ls"), "done"]]
    assert _check(ok, truth).valid
    assert _check("Error during inference: boom", truth).error_type == "multi_turn:inference_error"
    short = _check(ok[:1], truth)
    assert short.error_type == "multi_turn:force_terminated"
    assert "(1) does not match the length of the ground truth turns (2)" in short.errors[0]
    empty = _check([["just text"], ok[1]], truth)
    assert empty.error_type == "multi_turn:empty_turn_model_response"
    assert empty.errors == ["Model response list is empty for turn 0"]
    wrong_state = _check([[_calls('mkdir:{"dir_name": "b"}')], ok[1]], truth)
    assert wrong_state.error_type == "multi_turn:instance_state_mismatch"
    report = explain_failure(wrong_state)
    assert "GorillaFileSystem.root" in report and "mkdir(dir_name='b')" in report
    no_result = _check([ok[0], [_calls('cd:{"folder": "a"}')]], truth)
    assert no_result.error_type == "multi_turn:execution_response_mismatch"
    assert '{"current_directory_content": ["a"]}' in explain_failure(no_result)


def test_results_may_come_from_earlier_turns_and_extra_results_are_allowed():
    truth = [["ls()"], ["ls()"]]
    twice = [[_calls("ls", "ls", "pwd")], [_calls('cd:{"folder": "nowhere"}')]]
    assert _check(twice, truth).valid


def test_calls_in_a_turn_without_ground_truth_count_only_in_strict_mode():
    truth = [[], ["ls()"]]
    result = [[_calls("pwd")], [_calls("ls")]]
    assert _check(result, truth).valid  # the leaderboard's rule
    strict = _check(result, truth, strict=True)
    assert strict.error_type == "multi_turn:irrelevance_error:decoder_success"
    # the state those calls leave behind still counts
    changed = [[_calls('mkdir:{"dir_name": "x"}')], [_calls("ls")]]
    assert _check(changed, truth).error_type == "multi_turn:instance_state_mismatch"


def test_undecodable_steps_are_dropped():
    truth = [["ls()"]]
    result = [["some text", [{"ls": "not json"}], _calls("ls")]]
    assert _check(result, truth).valid


# -- the conversation loop ----------------------------------------------------------------------


class Scripted:
    """A step model that answers from a script and records every request."""

    def __init__(self, replies: list[Any], ids: bool = True) -> None:
        self.replies = list(replies)
        self.requests: list[StepRequest] = []
        self.ids = ids

    def step(self, request: StepRequest) -> StepReply:
        self.requests.append(request)
        result = self.replies.pop(0) if self.replies else "done"
        ids = [f"id{len(self.requests)}_{i}" for i in range(len(result))] if self.ids else []
        return StepReply(
            result=result,
            tool_call_ids=ids if isinstance(result, list) else [],
            latency=0.5,
            input_tokens=10,
            output_tokens=2,
        )


def test_fc_loop_feeds_results_back_as_tool_messages(texts):
    entry = _entry(2)
    model = Scripted([_calls("ls", "pwd"), "listed", "nothing to do"])
    generation = Conversation(Task(entry, None), model, "fc", texts).run()
    assert generation.result == [[_calls("ls", "pwd"), "listed"], ["nothing to do"]]
    assert generation.steps == 3 and generation.input_tokens == 30
    assert generation.latency == 1.5
    second = model.requests[1].messages
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in second[1]["tool_calls"]] == ["id1_0", "id1_1"]
    assert second[2] == {
        "role": "tool",
        "content": '{"current_directory_content": []}',
        "tool_call_id": "id1_0",
    }
    assert second[3]["content"] == '{"current_working_directory": "/r"}'
    assert model.requests[2].messages[-1] == {"role": "user", "content": "turn 1"}


def test_prompting_loop_sends_the_system_prompt_and_a_tool_result_list(texts):
    entry = _entry(1)
    model = Scripted(["[ls()]", "done"], ids=False)
    Conversation(Task(entry, None), model, "prompt", texts).run()
    first = model.requests[0].messages
    assert first[0]["role"] == "system" and "ls" in first[0]["content"]
    feedback = model.requests[1].messages[-1]
    assert feedback == {
        "role": "user",
        "content": repr(
            [{"role": "tool", "name": "ls()", "content": '{"current_directory_content": []}'}]
        ),
    }


def test_force_termination_after_the_step_limit(texts):
    entry = _entry(2)
    model = Scripted([_calls("pwd")] * 100)
    generation = Conversation(Task(entry, None), model, "fc", texts).run()
    assert len(generation.result) == 1  # no further turn is attempted
    assert len(generation.result[0]) == texts.maximum_steps + 1
    assert generation.details["force_terminated"] is True
    answer = MultiTurnAnswer(id=entry.id, ground_truth=[["pwd()"], ["pwd()"]])
    verdict = evaluate_multi_turn(entry, answer, generation.result, MultiTurnOptions("fc"))
    assert verdict.error_type == "multi_turn:force_terminated"


def test_held_out_functions_arrive_on_their_turn(dataset, texts):
    entry = dataset.entry_map("multi_turn_miss_func")["multi_turn_miss_func_0"]
    held = entry.held_out_sources_for(3)
    assert [d["name"] for d in held] == ["sort"]
    for mode in ("fc", "prompt"):
        model = Scripted(["ok"] * 10, ids=False)
        Conversation(Task(entry, None), model, mode, texts).run()
        before = [d["name"] for d in model.requests[2].functions]
        after = [d["name"] for d in model.requests[3].functions]
        assert "sort" not in before and after == [*before, "sort"]
        message = model.requests[3].messages[-1]
        if mode == "fc":
            assert message == {"role": "user", "content": texts.added_functions_fc}
        else:
            assert message["content"].startswith(repr(held))


def test_a_turn_stored_as_a_string_decodes_to_nothing_as_on_the_leaderboard(dataset):
    from pytest_bfcl.check.multi_turn import MultiTurnOptions, evaluate_multi_turn

    entry = dataset.entry_map("multi_turn_base")["multi_turn_base_0"]
    answer = dataset.answers("multi_turn_base")[entry.id]
    oracle_turns = [[[{name: "{}"} for name in ()]] for _ in answer.ground_truth]
    # the first turn, which has ground-truth calls, stored as one string of call text
    result = ["[cd(folder='document')]" * 3, *oracle_turns[1:]]
    verdict = evaluate_multi_turn(entry, answer, result, MultiTurnOptions("prompt"))
    assert not verdict.valid
    assert verdict.error_type == "multi_turn:empty_turn_model_response"
    assert "stored as a string" in verdict.errors[0]
    huge = ["x" * 5_000_000, *oracle_turns[1:]]  # never walked character by character
    assert evaluate_multi_turn(entry, answer, huge, MultiTurnOptions("fc")).error_type == (
        "multi_turn:empty_turn_model_response"
    )
