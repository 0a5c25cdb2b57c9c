"""The Responses API client: the requests it builds (as the leaderboard's Responses handler
builds them), the answers it reads, the history it carries from step to step, the choice of
the wire format, and the plugin asking a local Responses server end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.builtin_models import pytest_bfcl_make_model
from pytest_bfcl.dataset.fetch import DataSource
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.models.base import ModelSpecError, Task
from pytest_bfcl.models.endpoint_errors import Failure
from pytest_bfcl.models.endpoint_request import EndpointSettings
from pytest_bfcl.models.openai_chat import OpenAIChatModel
from pytest_bfcl.models.openai_responses import OpenAIResponsesModel
from pytest_bfcl.models.responses_request import ResponsesRequestBuilder, is_reasoning_family
from pytest_bfcl.models.responses_response import responses_record
from pytest_bfcl.run.conversation import Conversation
from pytest_bfcl.run.leaderboard import as_leaderboard_scores
from pytest_bfcl.scoring import TRUNCATED, ScoringOptions
from pytest_bfcl.settings import Settings
from pytest_bfcl.testing.recording_server import RecordingServer
from pytest_bfcl.testing.scripted_answers import Script


def _builder(texts: ProtocolTexts, mode: str = "fc", reasoning: bool = False, **kw: Any):
    settings = EndpointSettings(model="gpt-x", **kw)
    return ResponsesRequestBuilder(settings, ScoringOptions(mode, True), texts, reasoning)


def _entry(dataset: Dataset, category: str, index: int = 0):
    entry = dataset.entries(category)[index]
    return Task(entry, None)


# -- requests -----------------------------------------------------------------------------------


def test_fc_request_has_the_handlers_fields_and_flat_tools(dataset, texts):
    task = _entry(dataset, "simple_python")
    body = _builder(texts).for_task(task)
    assert set(body) == {"input", "model", "store", "temperature", "tools"}
    assert body["store"] is False and body["model"] == "gpt-x"
    tool = body["tools"][0]
    assert tool["type"] == "function" and "function" not in tool
    assert tool["name"] == task.entry.function[0].name.replace(".", "_")
    assert tool["parameters"]["type"] == "object"
    assert body["input"] == [m.model_dump() for m in task.entry.question[0]]


def test_reasoning_families_get_no_temperature_but_encrypted_reasoning(dataset, texts):
    body = _builder(texts, reasoning=True).for_task(_entry(dataset, "simple_python"))
    assert "temperature" not in body
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"summary": "auto"}
    assert [n for n in ("o3-2025", "o4-mini-x", "gpt-5-mini-2025-08-07") if is_reasoning_family(n)]
    assert not is_reasoning_family("gpt-4.1-2025-04-14")


def test_prompting_request_has_the_system_prompt_as_a_developer_message(dataset, texts):
    task = _entry(dataset, "simple_python")
    body = _builder(texts, mode="prompt", max_tokens=50).for_task(task)
    assert "tools" not in body and body["max_output_tokens"] == 50
    first = body["input"][0]
    assert first["role"] == "developer" and task.entry.function[0].name in first["content"]
    assert all(item.get("role") != "system" for item in body["input"])


def test_entry_system_messages_become_developer_messages(dataset, texts):
    entry = next(e for e in dataset.entries("live_simple") if e.question[0][0].role == "system")
    body = _builder(texts).for_task(Task(entry, None))
    assert body["input"][0] == {"role": "developer", "content": entry.question[0][0].content}


# -- answers ------------------------------------------------------------------------------------


def _answer(output: Any, **extra: Any) -> bytes:
    return json.dumps(
        {"output": output, "usage": {"input_tokens": 3, "output_tokens": 2}, **extra}
    ).encode()


def test_function_call_items_are_the_calls_and_everything_is_echoed():
    items = [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "a"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"},
    ]
    record = responses_record(_answer(items), 0.5)
    assert record["result"] == [{"f": "{}"}] and record["tool_call_ids"] == ["c1"]
    assert record["reasoning"] == "a\n" and record["echo"] == items
    assert (record["input_tokens"], record["output_tokens"]) == (3, 2)


def test_text_is_every_output_text_part_joined():
    items = [
        {"type": "message", "content": [{"type": "output_text", "text": "a"}, {"type": "refusal"}]},
        {"type": "message", "content": [{"type": "output_text", "text": "b"}]},
        "not an item",
    ]
    record = responses_record(
        _answer(items, status="incomplete", incomplete_details={"reason": "max_output_tokens"}), 0.1
    )
    assert record["result"] == "ab" and record["reasoning"] is None
    assert record["finish_reason"] == "max_output_tokens"
    assert len(record["echo"]) == 2  # what is no item is not echoed


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"error": {"message": "upstream down"}}', "error instead of a response"),
        (b'{"choices": [{"message": {"content": "hi"}}]}', "--bfcl-wire-format=chat-completions"),
        (b'{"id": "r"}', "no output"),
        (b"not json", "not JSON"),
    ],
)
def test_answers_without_output_are_infrastructure_failures(body, says):
    with pytest.raises(Failure) as caught:
        responses_record(body, 0.1)
    assert says in str(caught.value)


_FAILED_ERROR = {"code": "server_error", "message": "The model failed to generate"}
_CALL = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"status": "failed", "error": _FAILED_ERROR}, "model failed to generate"),
        ({"status": "failed"}, "status is failed"),
        ({"status": "cancelled"}, "status is cancelled"),
        ({"status": "in_progress"}, "status is in_progress"),
        ({"status": "completed", "error": _FAILED_ERROR}, "error beside the response"),
        (
            {"status": "incomplete", "incomplete_details": {"reason": "interrupted"}},
            "incomplete response (interrupted)",
        ),
        ({"status": "incomplete"}, "incomplete response"),
    ],
)
@pytest.mark.parametrize("output", [[], [_CALL]], ids=["no-output", "calls-beside"])
def test_a_failed_response_is_an_infrastructure_failure_even_with_calls(output, extra, says):
    with pytest.raises(Failure) as caught:
        responses_record(_answer(output, **extra), 0.1)
    assert says in str(caught.value)


@pytest.mark.parametrize("reason", ["max_output_tokens", "content_filter"])
def test_an_answer_incomplete_for_the_models_reasons_is_its_answer(reason):
    extra = {"status": "incomplete", "incomplete_details": {"reason": reason}}
    record = responses_record(_answer([_CALL], **extra), 0.1)
    assert record["result"] == [{"f": "{}"}] and record["finish_reason"] == reason


# -- conversations over the wire ----------------------------------------------------------------


def _model(server: RecordingServer, texts, mode: str = "fc", reasoning: bool = False):
    settings = EndpointSettings(model="gpt-x", base_urls=(server.base_url,), retries=1)
    return OpenAIResponsesModel(settings, ScoringOptions(mode, True), texts, reasoning)


def test_history_carries_the_returned_items_and_call_outputs(dataset, texts):
    script = Script(behaviours=("always",), shapes=("reasoning",))
    with RecordingServer(script) as server:
        model = _model(server, texts, reasoning=True)
        task = _entry(dataset, "multi_turn_base")
        generation = Conversation(task, model, "fc", texts).run()
        model.close()
        sent = [r.body for r in server.take()]
    assert all(r["store"] is False and "temperature" not in r for r in sent)
    assert generation.details is not None and generation.details["force_terminated"] is True
    first, second = sent[0], sent[1]
    answer = script.response(first)
    # the second request is the first's input, the answer's items as returned, the output
    added = second["input"][len(first["input"]) :]
    assert added[: len(answer["output"])] == answer["output"]
    call = answer["output"][-1]
    assert added[len(answer["output"]) :] == [
        {"type": "function_call_output", "call_id": call["call_id"], "output": added[-1]["output"]}
    ]
    assert answer["output"][0]["encrypted_content"] in json.dumps(second["input"])
    assert len(sent) == texts.maximum_steps + 1


def test_prompting_conversation_echoes_message_items_and_feeds_results_as_user_text(dataset, texts):
    script = Script(behaviours=("right",), shapes=("plain",))
    with RecordingServer(script) as server:
        model = _model(server, texts, mode="prompt")
        Conversation(_entry(dataset, "multi_turn_base"), model, "prompt", texts).run()
        model.close()
        sent = [r.body for r in server.take()]
    assert "tools" not in sent[0] and sent[0]["input"][0]["role"] == "developer"
    answer = script.response(sent[0])
    added = sent[1]["input"][len(sent[0]["input"]) :]
    assert added[0] == answer["output"][0] and added[0]["type"] == "message"
    assert added[1]["role"] == "user" and added[1]["content"].startswith("[{'role': 'tool'")


def test_a_server_fault_is_retried_and_not_recorded_as_an_answer(dataset, texts):
    with RecordingServer(Script(behaviours=("text",))) as server:
        server.faults = ["500", "error200"]
        settings = EndpointSettings(
            model="gpt-x", base_urls=(server.base_url,), retries=3, backoff=0.01
        )
        model = OpenAIResponsesModel(settings, ScoringOptions("fc", True), texts, False)
        generation = model.generate(_entry(dataset, "simple_python"))
        model.close()
        assert len(server.take()) == 1
    assert generation.result == "I have finished; nothing else to do."


def test_a_failed_response_is_retried_counted_and_never_cached(dataset, texts, tmp_path):
    from pytest_bfcl.models.cache import ResponseCache

    task = _entry(dataset, "simple_python")
    cache_dir = tmp_path / "cache"
    with RecordingServer(Script(behaviours=("right",))) as server:
        settings = EndpointSettings(
            model="gpt-x", base_urls=(server.base_url,), retries=2, backoff=0.01
        )
        server.faults = ["failed200"] * 9
        model = OpenAIResponsesModel(
            settings, ScoringOptions("fc", True), texts, False, ResponseCache(cache_dir)
        )
        with pytest.raises(Exception, match="model failed to generate"):
            model.generate(task)
        model.close()
        assert len(server.faults) < 8  # retried: each attempt was answered with the failure
        assert not list(cache_dir.rglob("*.json"))  # nothing stored for the rerun to replay
        server.faults = []
        # the server recovers: the rerun asks again and gets the model's answer
        again = OpenAIResponsesModel(
            settings, ScoringOptions("fc", True), texts, False, ResponseCache(cache_dir)
        )
        generation = again.generate(task)
        again.close()
        assert not generation.cached and isinstance(generation.result, list)
        assert len(server.take()) == 1


def test_failed_responses_on_every_request_stop_the_run_like_a_dead_server(dataset, texts):
    from pytest_bfcl.models.endpoint_errors import InferenceError, ServerDown

    stopped: list[ServerDown] = []
    with RecordingServer(Script(behaviours=("right",))) as server:
        settings = EndpointSettings(
            model="gpt-x", base_urls=(server.base_url,), retries=3, backoff=0.01
        )
        server.faults = ["failed200"] * 100
        model = OpenAIResponsesModel(settings, ScoringOptions("fc", True), texts, False)
        for entry in dataset.entries("simple_python")[:5]:
            try:
                model.generate(Task(entry, None))
            except ServerDown as exc:
                stopped.append(exc)
                break
            except InferenceError:
                continue  # this entry's error (E); the server-down rule counts the attempts
        model.close()
    assert stopped, "a server failing every response never stopped the run"
    message = str(stopped[0])
    assert "model failed to generate" in message and "\n" not in message


def test_a_failed_response_stored_by_an_older_version_is_a_miss():
    from pytest_bfcl.models.cache import record_problem

    stored = {"result": [{"f": "{}"}], "tool_call_ids": ["c1"], "finish_reason": "failed"}
    assert "server's failure" in str(record_problem(stored))


# -- choosing the wire format -------------------------------------------------------------------


def test_gpt_leaderboard_entries_are_asked_over_the_responses_api(data_source: DataSource):
    settings = Settings(model="gpt-4.1", leaderboard_model="gpt-4.1-2025-04-14-FC")
    assert as_leaderboard_scores(settings, data_source).wire_format == "responses"
    other = Settings(model="m", leaderboard_model="openbmb/MiniCPM-SALA-FC")
    assert as_leaderboard_scores(other, data_source).wire_format == "chat-completions"
    explicit = Settings(
        model="gpt-4.1", leaderboard_model="gpt-4.1-2025-04-14-FC", wire_format="chat-completions"
    )
    assert as_leaderboard_scores(explicit, data_source).wire_format == "chat-completions"


def _make(settings: Settings, data_source: DataSource):
    return pytest_bfcl_make_model(
        spec=settings.model,
        settings=settings,
        scoring=ScoringOptions(settings.mode, True),
        source=data_source,
        hook=None,
    )


def test_the_model_follows_the_wire_format_and_the_leaderboards_name(data_source, tmp_path):
    common = {"base_urls": ("http://127.0.0.1:9/v1",), "cache_dir": tmp_path}
    chat = _make(Settings(model="m", **common), data_source)
    assert type(chat) is OpenAIChatModel
    plain = _make(Settings(model="gpt-5-mini", wire_format="responses", **common), data_source)
    assert isinstance(plain, OpenAIResponsesModel)
    assert plain.metadata()["reasoning_family"] is True
    followed = as_leaderboard_scores(
        Settings(model="my-finetune", leaderboard_model="gpt-5-mini-2025-08-07-FC", **common),
        data_source,
    )
    model = _make(followed, data_source)
    assert isinstance(model, OpenAIResponsesModel) and model.metadata()["reasoning_family"]
    for made in (chat, plain, model):
        made.close()


def test_what_the_responses_api_cannot_do_is_refused_by_name(data_source, tmp_path):
    seeded = Settings(
        model="gpt-x", wire_format="responses", sampling_seed=3, base_urls=("http://h/v1",)
    )
    with pytest.raises(ModelSpecError, match="--bfcl-sampling-seed"):
        _make(seeded, data_source)
    started = Settings(model="vllm:some/model", wire_format="responses")
    with pytest.raises(ModelSpecError, match="chat-completions"):
        _make(started, data_source)


def test_a_plugin_run_over_the_responses_api(pytester, tmp_path: Path):
    with RecordingServer(Script(behaviours=("right",))) as server:
        result = pytester.runpytest(
            "--bfcl-model=gpt-4.1",
            f"--bfcl-base-url={server.base_url}",
            "--bfcl-wire-format=responses",
            "--bfcl-category=simple_python,multi_turn_base",
            "--bfcl-sample=4",
            f"--bfcl-cache-dir={tmp_path / 'cache'}",
            "-p",
            "no:cacheprovider",
        )
        recorded = server.take()
    outcomes = result.parseoutcomes()
    # every entry is scored: the answers are the model's (F), none is an error (E)
    assert outcomes.get("errors", 0) == 0
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 4
    assert recorded and {r.route for r in recorded} == {"responses"}
    assert all(r.body["store"] is False and "messages" not in r.body for r in recorded)


def test_an_answer_cut_at_the_size_limit_is_a_note_echoed_as_text():
    from pytest_bfcl.models.openai_responses import responses_answer_record
    from pytest_bfcl.models.responses_request import input_items

    record = responses_answer_record(b'{"output": [', 0.1, True, 10**9, 1000)
    assert "echo" not in record and record["finish_reason"] == TRUNCATED
    assert "larger than 1000 bytes" in record["result"]
    # without items of its own the answer joins the history as a text answer
    chat = {"role": "assistant", "content": record["result"]}
    assert input_items([chat]) == [chat]
