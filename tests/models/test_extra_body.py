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
        ('{"tool_choice": ', "is not JSON"),
        ('["tool_choice"]', "a JSON object of request fields"),
    ],
)
def test_fields_the_plugin_writes_and_bad_json_are_refused(given, message):
    with pytest.raises(ValueError, match="--bfcl-extra-body") as info:
        build_settings({"model": "m", "extra_body": given})
    assert message in str(info.value)


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
