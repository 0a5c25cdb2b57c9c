"""Hostile or broken servers and hostile answers end as the right outcome: the model's output,
whatever its size or shape, is scored (F, never E); infrastructure that cannot work stops the
run once (ServerDown, SetupError, WebToolsDown) with one line naming the fix. Timeouts here are
safety nets only; how long a stop takes is measured in benchmarks/test_stalled_server.py."""

from __future__ import annotations

import json
import os
import threading
import warnings

import pytest

from pytest_bfcl.check.oversized import TRUNCATED, oversized_answer_verdict
from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.errors import RunStopped, SetupError
from pytest_bfcl.models import openai_chat
from pytest_bfcl.models.base import StepRequest, Task
from pytest_bfcl.models.cache import CacheWarning, ResponseCache
from pytest_bfcl.models.endpoint_errors import status_failure
from pytest_bfcl.models.openai_chat import (
    EndpointSettings,
    InferenceError,
    OpenAIChatModel,
    ServerDown,
)
from pytest_bfcl.models.oracle_agentic import NOTHING_FOUND, question_move
from pytest_bfcl.scoring import CONTEXT_EXCEEDED
from pytest_bfcl.testing.fake_openai import FakeOpenAI
from pytest_bfcl.testing.fake_web import FakeWeb
from pytest_bfcl.web.access import FAILURES_TO_STOP, WebAccess, WebSettings, WebToolsDown

CATS = ["live_relevance", "live_irrelevance"]


def model_for(fake, texts, cache=None, **overrides) -> OpenAIChatModel:
    settings = {"model": "test-model", "base_urls": (fake.base_url,), "backoff": 0.01}
    settings.update(overrides)
    return OpenAIChatModel(
        EndpointSettings(**settings), ScoringOptions("fc", True), texts, cache=cache
    )


def in_thread(call, safety_s: float = 120):
    """Run ``call`` with a safety timeout; its result or exception."""
    box: list = []

    def run():
        try:
            box.append(("ok", call()))
        except BaseException as exc:  # handed to the test
            box.append(("raised", exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(safety_s)
    assert box, f"no outcome within {safety_s} s"
    return box[0]


# -- the server hangs or floods --------------------------------------------------------------


def test_a_dripping_server_times_out_per_request(server, texts, task):
    server.always = "drip"
    model = model_for(server, texts, timeout=2.0, retries=0)
    kind, outcome = in_thread(lambda: model.generate(task))
    assert kind == "raised" and isinstance(outcome, InferenceError)
    assert "no complete answer within 2 s" in str(outcome)
    assert "\n" not in str(outcome)


def test_a_silent_server_is_down_after_about_one_timeout(server, texts, task):
    server.always = "silent"
    model = model_for(server, texts, timeout=1.0, retries=4, backoff=0.05)
    outcomes = []
    threads = [
        threading.Thread(target=lambda: outcomes.append(in_thread(lambda: model.generate(task))))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert [isinstance(o, ServerDown) for _, o in outcomes].count(True) >= 1
    assert all(isinstance(o, InferenceError) for _, o in outcomes)
    assert "unreachable or failing" in (model.down_reason or "")


def test_a_server_that_answers_some_requests_is_not_down(server, dataset, texts, task):
    slow = Task(dataset.entries("live_relevance")[1], None)
    server.faults = {slow.entry.id: ["stall"] * 10}  # this entry never gets an answer
    model = model_for(server, texts, timeout=0.5, retries=3, backoff=0.05)
    done = threading.Event()

    def others() -> None:
        while not done.is_set():
            model.generate(task)

    helper = threading.Thread(target=others, daemon=True)
    helper.start()
    kind, outcome = in_thread(lambda: model.generate(slow))
    done.set()
    helper.join(60)
    assert kind == "raised" and type(outcome) is InferenceError, outcome
    assert "no usable answer after 4 attempts" in str(outcome)
    assert model.down_reason is None


def test_a_huge_answer_is_cut_stored_and_fails(server, texts, task, tmp_path):
    server.always = "huge"
    server.huge_bytes = 30_000_000
    cache = ResponseCache(tmp_path / "cache")
    model = model_for(server, texts, cache=cache, max_response_bytes=1_000_000)
    kind, generation = in_thread(lambda: model.generate(task))
    assert kind == "ok", generation
    assert generation.finish_reason == TRUNCATED
    envelope = {"model": "test-model", "choices": [{"index": 0, "message": {}}]}
    envelope["choices"][0]["message"] = {"role": "assistant", "content": ""}
    declared = 30_000_000 + len(json.dumps(envelope))  # the server's content-length
    assert generation.result == (
        f"[the answer was cut: larger than 1000000 bytes ({declared} bytes); not scored]"
    )
    stored = list((tmp_path / "cache").rglob("*.json"))
    assert len(stored) == 1 and stored[0].stat().st_size < 10_000
    verdict = oversized_answer_verdict(generation, "live_irrelevance")
    assert verdict is not None and not verdict.valid
    assert verdict.error_type == "response:too_large" and verdict.errors == [generation.result]
    record = json.loads(stored[0].read_text())
    assert record["response_truncated"] == {"limit": 1_000_000, "length": declared}
    again = model.generate(task)  # from the cache: the same cut answer, no request
    assert again.cached and again.finish_reason == TRUNCATED


# -- the answer is hostile: the model's failure, never an error -------------------------------


@pytest.mark.parametrize("value", ["many", -5, 1e400, True, {"n": 1}, [1], 2.5, 10**15])
def test_odd_usage_values_are_unknown_tokens(server, texts, task, value):
    server.patch = {"usage": {"prompt_tokens": value, "completion_tokens": value}}
    generation = model_for(server, texts).generate(task)
    assert (generation.input_tokens, generation.output_tokens) == (None, None)


@pytest.mark.parametrize(
    "patch",
    [
        {"choices": [{"message": {"content": [{"get_weather": "{}"}]}}]},
        {"choices": [{"message": {"tool_calls": {"a": 1}}}]},
        {"choices": [{"message": {"tool_calls": [{"function": {"name": 5, "arguments": {}}}]}}]},
        {"choices": [{"message": {"tool_calls": [{"function": {"name": ["x"]}}]}}]},
        {"choices": [{"message": {"tool_calls": ["call"], "content": None}}]},
        {"usage": "lots", "choices": [{"message": {"content": 12}, "finish_reason": []}]},
    ],
)
def test_odd_shapes_are_stored_as_data(server, texts, task, patch, tmp_path):
    server.patch = patch
    cache = ResponseCache(tmp_path / "cache")
    generation = model_for(server, texts, cache=cache).generate(task)
    assert isinstance(generation.result, str | list)
    if isinstance(generation.result, list):  # calls: names are strings
        assert all(isinstance(name, str) for call in generation.result for name in call)
    else:  # text is never a call list in disguise
        assert not generation.result.startswith("[{") or "get_weather" in generation.result
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1  # stored, once


# -- a 200 that holds no model message is the gateway's failure, never the model's ------------

NOT_COMPLETIONS = ["error200", "empty", "null_choices", "no_choices", "null_message"]
ODD_ENVELOPES = [{"choices": {"0": 1}}, {"choices": ["text"]}, {"choices": [{"message": "hi"}]}]


@pytest.mark.parametrize("fault", NOT_COMPLETIONS)
def test_a_200_without_a_message_is_retried_and_never_cached(server, texts, task, fault, tmp_path):
    server.faults = {task.entry.id: [fault]}
    cache = ResponseCache(tmp_path / "cache")
    generation = model_for(server, texts, cache=cache).generate(task)
    assert server.requests[task.entry.id] == 2  # retried like a 5xx
    assert generation.result == model_for(server, texts).generate(task).result  # the answer
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1


@pytest.mark.parametrize("fault", NOT_COMPLETIONS)
def test_a_gateway_that_keeps_failing_is_an_error_and_nothing_is_cached(
    server, texts, task, fault, tmp_path
):
    server.faults = {task.entry.id: [fault] * 10}
    cache = ResponseCache(tmp_path / "cache")
    with pytest.raises(InferenceError) as raised:
        model_for(server, texts, cache=cache, retries=2).generate(task)
    message = str(raised.value)  # retries ran out, or the server counts as down by now
    assert server.requests[task.entry.id] == 3 and "answered 200 with" in message
    assert "\n" not in message
    if fault == "error200":
        assert "upstream provider returned 502" in message
    assert not list((tmp_path / "cache").rglob("*.json"))  # the rerun asks again
    server.faults = {}
    again = model_for(server, texts, cache=cache).generate(task)
    assert not again.cached and again.result != ""


@pytest.mark.parametrize("patch", ODD_ENVELOPES)
def test_an_envelope_without_a_message_object_is_not_an_answer(server, texts, task, patch):
    server.patch = patch
    with pytest.raises(InferenceError, match="answered 200 with"):
        model_for(server, texts, retries=1).generate(task)


def test_a_gateway_answering_only_errors_counts_toward_the_server_down_stop(server, texts, task):
    server.chat_fault = "error200"
    model = model_for(server, texts, retries=4, backoff=0.05)

    def entries_until_down() -> ServerDown:
        for _ in range(10):
            with pytest.raises(InferenceError) as raised:
                model.generate(task)
            if isinstance(raised.value, ServerDown):
                return raised.value
        raise AssertionError("the session never stopped")

    kind, outcome = in_thread(entries_until_down)
    assert kind == "ok" and isinstance(outcome, ServerDown), outcome
    assert "upstream provider returned 502" in str(outcome) and "\n" not in str(outcome)


# -- a context-length refusal is the model's failure, as the leaderboard scores it ------------


def test_a_context_refusal_is_the_models_failure_and_not_cached(server, texts, task, tmp_path):
    server.faults = {task.entry.id: ["context"]}
    cache = ResponseCache(tmp_path / "cache")
    model = model_for(server, texts, cache=cache)
    generation = model.generate(task)
    assert server.requests[task.entry.id] == 1  # not retried
    assert generation.finish_reason == CONTEXT_EXCEEDED
    assert "context window" in generation.result and "maximum context length is 4096" in (
        generation.result
    )
    verdict = oversized_answer_verdict(generation, "live_relevance")
    assert verdict is not None and not verdict.valid
    assert verdict.error_type == "request:context_length"
    assert not list((tmp_path / "cache").rglob("*.json"))
    assert not model.generate(task).cached  # asked again: a longer window may answer now
    assert server.requests[task.entry.id] == 2
    assert model.down_reason is None


@pytest.mark.parametrize(
    ("status", "text", "context"),
    [
        (400, "The decoder prompt (length 5000) is longer than the maximum model length", True),
        (400, "the request exceeds the available context size, try increasing it", True),
        (422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096", True),
        (400, "prompt is too long: 210000 tokens > 200000 maximum", True),
        (400, "unknown field 'tools'", False),
        (400, "Invalid 'tools': array too long. Expected an array with maximum length 128", False),
        (400, "max_tokens must be <= 4096", False),
        (400, "This model's maximum context length is 8192 tokens", True),
        (500, "maximum context length exceeded", False),
    ],
)
def test_context_refusals_as_servers_word_them(status, text, context):
    failure = status_failure(status, "http://h/v1/chat/completions", text, None)
    assert (failure.kind == "context") is context


def test_a_base_url_with_a_query_keeps_it_after_the_route(server, texts, task):
    model = model_for(server, texts, base_urls=(server.base_url + "?api-version=2024-10-21",))
    assert model.generate(task).result != ""
    assert server.paths[-1] == "/v1/chat/completions?api-version=2024-10-21"
    replica = model.replicas[0]
    assert replica.models_url == server.base_url + "/models?api-version=2024-10-21"


def test_lone_surrogates_are_stored_and_read_back(server, texts, task, tmp_path):
    message = {
        "content": None,
        "tool_calls": [{"function": {"name": "f\ud800", "arguments": '{"a": "\ud800"}'}}],
    }
    server.patch = {"choices": [{"index": 0, "message": message}]}
    cache = ResponseCache(tmp_path / "cache")
    first = model_for(server, texts, cache=cache).generate(task)
    requests = server.total_requests()
    again = model_for(server, texts, cache=cache).generate(task)
    assert again.cached and again.result == first.result == [{"f\ud800": '{"a": "\ud800"}'}]
    assert server.total_requests() == requests


def test_a_history_holding_lone_surrogates_is_sent_and_cached(server, texts, task, tmp_path):
    messages = [{"role": "system", "content": "earlier: \ud800"}]
    messages += [m.model_dump() for m in task.entry.question[0]]
    step = StepRequest(task, messages, [], "fc", 0, 1)
    cache = ResponseCache(tmp_path / "cache")
    first = model_for(server, texts, cache=cache).step(step)
    again = model_for(server, texts, cache=cache).step(step)
    assert not first.cached and again.cached and again.result == first.result


@pytest.mark.parametrize(
    "content",
    [
        "[1, 2]",
        '{"no": "result"}',
        '{"result": 5}',
        '{"result": "", "latency": "x"}',
        '{"result": "a"',
        "\x00\xff",
        "",
    ],
)
def test_a_bad_cache_file_is_a_miss_warned_once(server, texts, task, tmp_path, content):
    cache = ResponseCache(tmp_path / "cache")
    model = model_for(server, texts, cache=cache)
    model.generate(task)
    path = next((tmp_path / "cache").rglob("*.json"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            path.write_text(content, encoding="latin-1")
            assert not model.generate(task).cached  # asked again, file replaced
    assert [str(w.message).count(str(path)) for w in caught if w.category is CacheWarning] == [1]
    assert model.generate(task).cached


@pytest.mark.parametrize("content", ['{"result": {"calls": 1}}', '{"result": [["f", "{}"]]}',
                                     '{"result": [{"f": "{}", "g": "{}"}]}',
                                     '{"result": "", "tool_call_ids": [1]}'])  # fmt: skip
def test_a_cache_record_no_server_could_produce_is_a_miss(server, texts, task, tmp_path, content):
    cache = ResponseCache(tmp_path / "cache")
    model = model_for(server, texts, cache=cache)
    model.generate(task)
    path = next((tmp_path / "cache").rglob("*.json"))
    path.write_text(content)
    with pytest.warns(CacheWarning, match="not what a server answers|not all text|is a dict"):
        again = model.generate(task)
    assert not again.cached and model.generate(task).cached  # asked again, then replaced


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory", "oversized"])
def test_a_cache_record_that_is_no_regular_file_is_a_miss_warned_once(
    server, texts, task, tmp_path, kind
):
    cache = ResponseCache(tmp_path / "cache", max_bytes=100_000)
    model = model_for(server, texts, cache=cache)
    model.generate(task)
    path = next((tmp_path / "cache").rglob("*.json"))
    path.unlink()
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text('{"result": "' + "x" * 200_000 + '"}')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcomes = [in_thread(lambda: model.generate(task), safety_s=30) for _ in range(2)]
    assert all(kind_ == "ok" for kind_, _ in outcomes) and not outcomes[0][1].cached
    assert outcomes[1][1].cached is (kind != "directory")  # replaced by a regular file
    messages = [str(w.message) for w in caught if w.category is CacheWarning]
    assert len(messages) == 1 and str(path) in messages[0] and "\n" not in messages[0]
    assert cache.place.failure is None  # one record's place, not the cache's


# -- the server refuses us: one stop naming the fix -------------------------------------------


@pytest.mark.parametrize(("fault", "fix"), [("401", "OPENAI_API_KEY"), ("404", "--bfcl-base-url")])
def test_refusals_stop_the_run_with_the_fix(server, texts, task, fault, fix):
    server.always = fault
    model = model_for(server, texts, retries=4)
    with pytest.raises(ServerDown) as raised:
        model.generate(task)
    assert f"HTTP {fault} from {server.base_url}/chat/completions: fault {fault}" in str(
        raised.value
    )
    assert fix in str(raised.value) and "\n" not in str(raised.value)
    assert server.total_requests() == 0 or server.total_requests() <= OpenAIChatModel.FATAL_AFTER
    with pytest.raises(ServerDown):  # later entries: at once
        model.generate(task)


def test_one_dead_replica_does_not_stop_the_run(server, dataset, texts, task):
    dead = FakeOpenAI(dataset, CATS)
    dead.server.server_close()  # refuses connections
    model = model_for(server, texts, base_urls=(dead.base_url, server.base_url), retries=4)
    for _ in range(6):
        assert model.generate(task).result != ""
    assert model.down_reason is None


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ({"always": "401"}, "refuses the API key"),
        ({"served_models": ["other-model", "third"]}, "serves: other-model, third"),
        ({"always": "drip"}, "does not answer"),
    ],
)
def test_probe_names_the_problem(server, texts, setup, expected, monkeypatch):
    monkeypatch.setattr(openai_chat, "PROBE_TIMEOUT", 1.0)  # a dripping server: 1 s, not 15
    for name, value in setup.items():
        setattr(server, name, value)
    model = model_for(server, texts)
    kind, outcome = in_thread(model.probe)
    assert kind == "raised" and isinstance(outcome, SetupError), outcome
    assert expected in str(outcome) and "\n" not in str(outcome)


def test_probe_accepts_a_server_that_serves_the_model(server, texts):
    assert model_for(server, texts).probe() is None
    server.served_models = []  # an empty listing says nothing: accepted
    assert model_for(server, texts).probe() is None


def test_probe_of_a_refused_connection(dataset, texts):
    dead = FakeOpenAI(dataset, CATS)
    dead.server.server_close()
    with pytest.raises(SetupError, match=r"connection refused.*--bfcl-base-url"):
        model_for(dead, texts).probe()


def test_a_huge_answer_fails_its_entry_end_to_end(pytester, server, tmp_path):
    server.faults = {"live_relevance_0-0-0": ["huge"]}
    server.huge_bytes = 20_000_000
    result = pytester.runpytest_subprocess(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={server.base_url}",
        "--bfcl-category=live_relevance",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        "--bfcl-max-response-bytes=100000",
        "-p",
        "no:cacheprovider",
        timeout=300,
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) == 0
    assert outcomes.get("failed", 0) >= 1


def test_lone_surrogates_are_failures_end_to_end(pytester, server, dataset, tmp_path):
    entry = dataset.entries("live_irrelevance")[1]
    server.faults = {entry.id: ["surrogate"]}
    prefix = entry.id.rsplit("-", 2)[0] + "-"  # ids of one question number
    result = pytester.runpytest_subprocess(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={server.base_url}",
        "--bfcl-category=live_irrelevance",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        f"--bfcl-results-dir={tmp_path / 'results'}",
        f"--bfcl-report={tmp_path / 'report.json'}",
        f"--bfcl-html={tmp_path / 'report.html'}",
        f"--bfcl-save-baseline={tmp_path / 'baseline.json'}",
        f"--junitxml={tmp_path / 'junit.xml'}",
        "-k",
        prefix,
        "-p",
        "no:cacheprovider",
        timeout=300,
    )
    outcomes = result.parseoutcomes()
    # recorded in the new baseline as failing: an expected failure of this recording run
    assert (outcomes.get("xfailed"), outcomes.get("errors", 0)) == (1, 0), result.stdout.str()[
        -3000:
    ]
    assert "irrelevance_error:decoder_success" in result.stdout.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    # stored escaped, whole: every entry's record, the surrogate's included
    stored = next((tmp_path / "results").rglob("BFCL_v4_live_irrelevance_result.json"))
    records = {r["id"]: r for r in map(json.loads, stored.read_text("utf-8").splitlines())}
    assert list(records[entry.id]["result"][0].values()) == ['{"a": "\ud800"}']
    assert "\\ud800" in stored.read_text("utf-8")  # escaped in the file
    assert len(records) == sum(1 for e in dataset.entries("live_irrelevance") if prefix in e.id)
    for name in ("report.json", "report.html", "baseline.json", "junit.xml"):
        assert (tmp_path / name).is_file(), name


def test_a_context_refusal_fails_its_entry_with_one_summary_line(
    pytester, server, dataset, tmp_path
):
    entry = dataset.entries("live_irrelevance")[1]
    server.faults = {entry.id: ["context"]}
    prefix = entry.id.rsplit("-", 2)[0] + "-"
    result = pytester.runpytest_subprocess(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={server.base_url}",
        "--bfcl-category=live_irrelevance",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        "-k",
        prefix,
        "-p",
        "no:cacheprovider",
        timeout=300,
    )
    out = result.stdout.str()
    assert (result.parseoutcomes().get("failed"), result.parseoutcomes().get("errors", 0)) == (
        1,
        0,
    ), out[-3000:]
    assert "request:context_length" in out
    assert out.count("1 entry refused by the server as longer than the model's context") == 1


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_a_conversation_that_outgrows_the_window_is_a_failure(
    pytester, dataset, data_source, tmp_path, mode
):
    entry = dataset.entries("multi_turn_base")[0]
    with FakeOpenAI(dataset, ["multi_turn_base"], mode=mode) as fake:
        fake.faults = {entry.id: ["ok", "ok", "context"]}  # refused at the third request
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={fake.base_url}",
            f"--bfcl-mode={mode}",
            "--bfcl-category=multi_turn_base",
            f"--bfcl-data={data_source.data_dir}",
            f"--bfcl-results-dir={tmp_path / 'results'}",
            "-k",
            entry.id,
            "-p",
            "no:cacheprovider",
            timeout=300,
        )
        assert fake.requests[entry.id] == 3  # nothing sent after the refusal
    out = result.stdout.str()
    outcomes = result.parseoutcomes()
    assert (outcomes.get("failed"), outcomes.get("errors", 0)) == (1, 0), out[-3000:]
    assert f"{entry.id} [multi_turn_base] request:context_length" in out
    stored = (tmp_path / "results").rglob("BFCL_v4_multi_turn_base_result.json")
    records = [json.loads(line) for line in next(stored).read_text().splitlines()]
    assert len(records) == 1 and "context window" in records[0]["result"]  # written whole


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_a_conversation_that_outgrows_its_budget_is_a_failure(
    pytester, dataset, data_source, tmp_path, mode
):
    entry = dataset.entries("multi_turn_base")[0]
    with FakeOpenAI(dataset, ["multi_turn_base"], mode=mode) as fake:
        fake.flood = (10, 50_000)  # about 500 kB an answer, every step calls again
        fake.faults = {entry.id: ["flood"] * 30}
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={fake.base_url}",
            f"--bfcl-mode={mode}",
            "--bfcl-category=multi_turn_base",
            f"--bfcl-data={data_source.data_dir}",
            f"--bfcl-results-dir={tmp_path / 'results'}",
            f"--bfcl-cache-dir={tmp_path / 'cache'}",
            "--bfcl-max-entry-bytes=1500000",
            f"--bfcl-html={tmp_path / 'report.html'}",
            f"--bfcl-report={tmp_path / 'report.json'}",
            f"--junitxml={tmp_path / 'junit.xml'}",
            "-k",
            entry.id,
            "-p",
            "no:cacheprovider",
            timeout=300,
        )
        assert fake.requests[entry.id] == 3  # the third answer would take it over: no more
    out = result.stdout.str()
    outcomes = result.parseoutcomes()
    assert (outcomes.get("failed"), outcomes.get("errors", 0)) == (1, 0), out[-3000:]
    assert f"{entry.id} [multi_turn_base] entry:budget_exceeded" in out
    assert "budget of 1500000 bytes (--bfcl-max-entry-bytes)" in out
    stored = next((tmp_path / "results").rglob("BFCL_v4_multi_turn_base_result.json"))
    record = json.loads(stored.read_text())
    assert "outgrew its budget" in record["result"] and stored.stat().st_size < 4_000_000
    assert "Traceback" not in out + result.stderr.str()
    assert "entry:budget_exceeded" in (tmp_path / "junit.xml").read_text()
    assert (tmp_path / "report.html").is_file() and (tmp_path / "report.json").is_file()


# -- web tools --------------------------------------------------------------------------------


def test_web_failures_in_a_row_stop_the_run(tmp_path):
    access = WebAccess(WebSettings(provider="serpapi", search_url="http://127.0.0.1:9/search"))
    for _ in range(FAILURES_TO_STOP - 1):
        assert "error" in access.search("tea", 3, "wt-wt")
    with pytest.raises(WebToolsDown) as raised:
        access.search("tea", 3, "wt-wt")
    assert isinstance(raised.value, RunStopped)
    assert access.failures["search"] == FAILURES_TO_STOP
    with pytest.raises(WebToolsDown):
        access.fetch("https://example.org/")


def test_a_success_resets_the_web_failure_count():
    with FakeWeb() as web:
        good = WebSettings(provider="serpapi", search_url=web.search_url, allow_private=True)
        access = WebAccess(good)
        for _ in range(3):
            for _ in range(FAILURES_TO_STOP - 1):
                assert "error" in access.fetch("http://127.0.0.1:9/")  # refused: network
            assert "hits" in access.search("tea", 3, "wt-wt")
        assert access.failures["fetch"] == 3 * (FAILURES_TO_STOP - 1)
        # missing pages are the web's answer, not a broken network
        for _ in range(2 * FAILURES_TO_STOP):
            assert "error" in access.fetch(f"{web.base}/nothing")


def test_web_preflight(tmp_path):
    empty = tmp_path / "cassette"
    empty.mkdir()
    with pytest.raises(SetupError, match="holds no searches"):
        WebAccess(WebSettings(mode="replay", cassette=empty)).preflight()
    dead = WebSettings(provider="serpapi", search_url="http://127.0.0.1:9/search")
    with pytest.raises(SetupError, match="web search does not work here"):
        WebAccess(dead).preflight()
    with FakeWeb() as web:
        alive = WebSettings(provider="serpapi", search_url=web.search_url)
        assert WebAccess(alive).preflight() is None


def test_the_oracle_does_not_answer_when_the_search_failed(dataset):
    entry = dataset.entries("web_search_base")[0]
    answer = dataset.answers("web_search_base").get(entry.id)
    messages = [
        {"role": "user", "content": "question"},
        {"role": "tool", "content": "{'error': 'Failed to retrieve the search results'}"},
    ]
    request = StepRequest(Task(entry, answer), messages, [], "fc", 0, 1)
    assert question_move(request) == NOTHING_FOUND
