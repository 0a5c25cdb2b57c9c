"""``--bfcl-extra-body``: request fields beyond the leaderboard's (``tool_choice``,
``chat_template_kwargs``...) go into every request, change the cache identity, show in the
report's header and metadata, are stamped on a saved baseline (a baseline with other fields is
refused in one line), and fields the plugin writes itself are refused with the option to use."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.models.endpoint_request import EndpointSettings, RequestBuilder
from pytest_bfcl.scoring import ScoringOptions
from pytest_bfcl.settings import build_settings
from pytest_bfcl.testing.fake_openai import FakeOpenAI

FIELDS = '{"tool_choice": "required", "chat_template_kwargs": {"enable_thinking": false}}'

RECORDER = """
import json
def pytest_bfcl_transform_request(request, model):
    with open({path!r}, "a") as fh:
        fh.write(json.dumps(request) + "\\n")
"""


def test_the_fields_are_added_to_every_request(texts):
    settings = EndpointSettings(model="m", extra_body={"tool_choice": "required", "top_k": 5})
    builder = RequestBuilder(settings, ScoringOptions("fc", True), texts)
    body = builder.body([{"role": "user", "content": "hi"}], [])
    assert body["tool_choice"] == "required" and body["top_k"] == 5
    assert body["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ('{"temperature": 0.7}', "cannot set 'temperature': set it with --bfcl-temperature"),
        ('{"messages": []}', "cannot set 'messages': the plugin sets it"),
        ('{"store": true}', "cannot set 'store': the plugin sets it"),
        ('{"input": []}', "cannot set 'input': the plugin sets it"),
        ('{"max_output_tokens": 9}', "set it with --bfcl-max-tokens"),
        ('{"tool_choice": ', "is not JSON"),
        ('["tool_choice"]', "a JSON object of request fields"),
    ],
)
def test_fields_the_plugin_writes_and_bad_json_are_refused(given, message):
    with pytest.raises(ValueError, match="--bfcl-extra-body") as info:
        build_settings({"model": "m", "extra_body": given})
    assert message in str(info.value)


def test_the_fields_go_into_every_responses_request(texts, dataset):
    from pytest_bfcl.models.base import Task
    from pytest_bfcl.models.responses_request import ResponsesRequestBuilder

    settings = EndpointSettings(model="gpt-x", extra_body={"tool_choice": "required", "top_k": 5})
    builder = ResponsesRequestBuilder(settings, ScoringOptions("fc", True), texts, False)
    body = builder.for_task(Task(dataset.entries("simple_python")[0], None))
    assert body["tool_choice"] == "required" and body["top_k"] == 5 and body["store"] is False


@pytest.mark.parametrize("field", ["reasoning", "include"])
def test_responses_fields_the_plugin_writes_for_reasoning_models_are_refused(texts, field):
    from pytest_bfcl.models.base import ModelSpecError
    from pytest_bfcl.models.openai_responses import OpenAIResponsesModel

    settings = EndpointSettings(model="gpt-5-mini", extra_body={field: {"effort": "high"}})
    with pytest.raises(ModelSpecError, match=f"cannot set '{field}' for gpt-5-mini"):
        OpenAIResponsesModel(settings, ScoringOptions("fc", True), texts, True)
    # a model of another family gets no reasoning fields from the plugin: the user's are sent
    plain = EndpointSettings(model="gpt-4.1", extra_body={field: {"effort": "high"}})
    OpenAIResponsesModel(plain, ScoringOptions("fc", True), texts, False).close()


def test_a_plugin_run_over_the_responses_api_sends_the_fields_and_stamps_them(pytester, tmp_path):
    from pytest_bfcl.testing.recording_server import RecordingServer
    from pytest_bfcl.testing.scripted_answers import Script

    baseline = tmp_path / "baseline.json"
    with RecordingServer(Script(behaviours=("right",))) as server:
        result = pytester.runpytest(
            "--bfcl-model=gpt-4.1",
            f"--bfcl-base-url={server.base_url}",
            "--bfcl-wire-format=responses",
            "--bfcl-category=simple_python",
            "--bfcl-sample=3",
            f"--bfcl-cache-dir={tmp_path / 'cache'}",
            f"--bfcl-extra-body={FIELDS}",
            f"--bfcl-save-baseline={baseline}",
            "-p",
            "no:cacheprovider",
        )
        recorded = server.take()
    outcomes = result.parseoutcomes()
    assert (
        outcomes.get("errors", 0) == 0
        and outcomes.get("passed", 0) + outcomes.get("xfailed", 0) == 3
    )
    assert len(recorded) == 3 and all(r.body["tool_choice"] == "required" for r in recorded)
    stamp = json.loads(baseline.read_text())["metadata"]
    assert stamp["wire_format"] == "responses" and stamp["extra_body"] == json.loads(FIELDS)
    scheme, iterations, salt, digest = stamp["extra_body_digest"].split("$")
    assert scheme == "pbkdf2-sha256" and int(iterations) >= 100_000
    assert len(salt) == 32 and len(digest) == 64  # salted and stretched


@pytest.fixture
def server(dataset):
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        yield fake


def run(pytester, server, tmp_path, name, *extra):
    report = tmp_path / f"{name}.json"
    result = pytester.runpytest(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={server.base_url}",
        "--bfcl-category=live_parallel",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        f"--bfcl-report={report}",
        "-p",
        "no:cacheprovider",
        *extra,
    )
    return result, (json.loads(report.read_text()) if report.exists() else None)


def test_a_run_with_fields_is_marked_asks_again_and_stamps_its_baseline(pytester, server, tmp_path):
    sent = tmp_path / "sent.jsonl"
    pytester.makeconftest(RECORDER.format(path=str(sent)))
    baseline = tmp_path / "baseline.json"
    plain, _ = run(pytester, server, tmp_path, "plain", f"--bfcl-save-baseline={baseline}")
    plain.assert_outcomes(passed=16)
    assert "--bfcl-extra-body" not in plain.stdout.str()
    asked = server.total_requests()
    # with fields: every request carries them, the cache does not answer for the plain run
    html = tmp_path / "extra.html"
    extra, report = run(
        pytester, server, tmp_path, "extra", f"--bfcl-extra-body={FIELDS}", f"--bfcl-html={html}"
    )
    extra.assert_outcomes(passed=16)
    assert server.total_requests() == asked + 16
    bodies = [json.loads(line) for line in sent.read_text().splitlines()]
    assert len(bodies) == 32 and all(b.get("tool_choice") == "required" for b in bodies[16:])
    assert not any("tool_choice" in b for b in bodies[:16])
    assert report["metadata"]["extra_body"] == json.loads(FIELDS)
    extra.stdout.fnmatch_lines(
        ["request fields beyond the leaderboard's (--bfcl-extra-body): *tool_choice*; "
         "scores not comparable to the leaderboard"]
    )  # fmt: skip
    header = html.read_text()[: html.read_text().index("</header>")]
    assert "request fields" in header and "not comparable to the leaderboard" in header
    # a baseline recorded without them is refused, in one line
    refused, _ = run(
        pytester, server, tmp_path, "refused", f"--bfcl-extra-body={FIELDS}",
        f"--bfcl-baseline={baseline}",
    )  # fmt: skip
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [x for x in refused.stderr.lines if "request fields differ" in x]
    assert 'baseline none, this run {"chat_template_kwargs"' in line


def test_the_ini_key_sets_the_fields(pytester, server, tmp_path):
    pytester.makeini(f"[pytest]\nbfcl_extra_body = {FIELDS}\n")
    result, report = run(pytester, server, tmp_path, "ini")
    result.assert_outcomes(passed=16)
    assert report["metadata"]["extra_body"]["tool_choice"] == "required"


def test_a_chat_run_does_not_gate_against_a_responses_baseline(pytester, server, tmp_path):
    baseline = tmp_path / "baseline.json"
    saved, _ = run(pytester, server, tmp_path, "saved", f"--bfcl-save-baseline={baseline}")
    saved.assert_outcomes(passed=16)
    data = json.loads(baseline.read_text())
    assert data["metadata"]["wire_format"] == "chat-completions"
    data["metadata"]["wire_format"] = "responses"  # as a Responses run records it
    baseline.write_text(json.dumps(data))
    refused, _ = run(pytester, server, tmp_path, "refused", f"--bfcl-baseline={baseline}")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [x for x in refused.stderr.lines if "wire format differs" in x]
    assert "baseline responses, this run chat-completions" in line
