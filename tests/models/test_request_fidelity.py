"""Requests as the leaderboard's chat-completions handler sends them: its parameters (read
from the pinned release's handler source with ``ast``) and the assistant message echoed into a
conversation's history."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.models.base import Task
from pytest_bfcl.models.endpoint_request import EndpointSettings, RequestBuilder
from pytest_bfcl.models.endpoint_response import completion_record
from pytest_bfcl.models.leaderboard_wire import (
    NO_REASONING_PARSERS,
    REFERENCE_TEMPERATURE,
    echoed_message,
)
from pytest_bfcl.models.openai_chat import OpenAIChatModel
from pytest_bfcl.run.conversation import Conversation
from pytest_bfcl.run.leaderboard import as_leaderboard_scores
from pytest_bfcl.scoring import ScoringOptions
from pytest_bfcl.settings import Settings

HANDLER = "bfcl_eval/model_handler/api_inference/openai_completion.py"


def _method(root: Path, name: str) -> ast.FunctionDef:
    tree = ast.parse((root / HANDLER).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise AssertionError(f"{name} not found in {HANDLER}")


def _sent_parameters(method: ast.FunctionDef) -> dict[str, Any]:
    """The request parameters a query method passes to ``create``: the keys of its kwargs dict
    literal, the keywords of its call, and ``kwargs["x"] = ...`` assignments; constants by
    value, anything else as ``...``."""

    def value(node: ast.expr) -> Any:
        return node.value if isinstance(node, ast.Constant) else ...

    sent: dict[str, Any] = {}
    for node in ast.walk(method):
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "kwargs":
            assert isinstance(node.value, ast.Dict)
            for key, val in zip(node.value.keys, node.value.values, strict=True):
                assert isinstance(key, ast.Constant)
                sent[key.value] = value(val)
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
            "generate_with_backoff"
        ):
            sent.update({kw.arg: value(kw.value) for kw in node.keywords if kw.arg})
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and ast.unparse(node.value) == "kwargs"
            and isinstance(node.slice, ast.Constant)
        ):
            sent[node.slice.value] = ...
    return sent


def _docs() -> list[dict[str, Any]]:
    return [{"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {}}}]


@pytest.mark.parametrize(("mode", "method"), [("fc", "_query_FC"), ("prompt", "_query_prompting")])
def test_the_body_holds_what_the_reference_handler_sends(data_source, texts, mode, method):
    reference = _sent_parameters(_method(data_source.unpacked_root, method))
    builder = RequestBuilder(EndpointSettings(model="m"), ScoringOptions(mode, False), texts)
    body = builder.body([{"role": "user", "content": "hi"}], _docs())
    assert set(body) == set(reference)  # nothing missing, nothing added
    for key, value in reference.items():
        if value is not ...:
            assert body[key] == value, key
    assert body["store"] is False


def test_no_tools_key_when_there_are_no_tools(texts):
    builder = RequestBuilder(EndpointSettings(model="m"), ScoringOptions("fc", False), texts)
    assert "tools" not in builder.body([{"role": "user", "content": "hi"}], [])


def test_the_default_temperature_is_the_leaderboards(data_source):
    source = (data_source.unpacked_root / "bfcl_eval/_llm_response_generation.py").read_text()
    call = next(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "--temperature"
    )
    default = next(kw.value for kw in call.keywords if kw.arg == "default")
    assert isinstance(default, ast.Constant)
    assert default.value == REFERENCE_TEMPERATURE
    assert Settings(model="m").temperature == default.value
    assert EndpointSettings(model="m").temperature == default.value


def test_a_temperature_the_user_sets_is_sent(texts):
    builder = RequestBuilder(
        EndpointSettings(model="m", temperature=0.7, max_tokens=9, seed=3),
        ScoringOptions("fc", False),
        texts,
    )
    body = builder.body([{"role": "user", "content": "hi"}], _docs())
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.7, 9, 3)


# -- the answer echoed into the history ---------------------------------------------------------

CALL = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}, "index": 0}
# What vLLM and the OpenAI SDK return beside the content: kept by the plain handler.
VLLM_FIELDS = {"refusal": None, "annotations": None, "audio": None, "function_call": None}


def _message(**fields: Any) -> dict[str, Any]:
    return {"role": "assistant", **fields}


@pytest.mark.parametrize("mode", ["fc", "prompt"])
@pytest.mark.parametrize(
    "message",
    [
        _message(content="Sure, doing that now.", tool_calls=[CALL], **VLLM_FIELDS),
        _message(content="done", reasoning_content="thinking", tool_calls=[], **VLLM_FIELDS),
        _message(content=None, reasoning_content=None, tool_calls=[CALL]),
        _message(content="[ls()]", reasoning="newer vLLM field"),
    ],
)
def test_the_plain_handler_echoes_the_message_as_returned(message, mode):
    assert echoed_message(message, mode, "as-returned") == message


def test_reasoning_handlers_rebuild_a_message_with_calls_from_its_calls_and_text():
    message = _message(content="Sure.", reasoning_content="why", tool_calls=[CALL], **VLLM_FIELDS)
    bare = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    expected = {"role": "assistant", "content": "Sure.", "tool_calls": [bare]}
    assert echoed_message(message, "fc", "no-reasoning") == expected
    # rebuilt even without reasoning: only what the handler copies is kept
    no_reasoning = _message(content=None, tool_calls=[CALL], **VLLM_FIELDS)
    assert echoed_message(no_reasoning, "fc", "no-reasoning") == {**expected, "content": None}


def test_reasoning_handlers_strip_a_text_answer_only_when_it_holds_reasoning():
    text = _message(content="done", reasoning_content="why", tool_calls=[], **VLLM_FIELDS)
    assert echoed_message(text, "fc", "no-reasoning") == {"role": "assistant", "content": "done"}
    plain = _message(content="done", tool_calls=[], **VLLM_FIELDS)
    assert echoed_message(plain, "fc", "no-reasoning") == plain
    assert echoed_message(plain, "prompt", "no-reasoning") == plain
    # prompting: the text as str() writes it, so a missing text reads "None" (reference quirk)
    empty = _message(content=None, reasoning_content="why", **VLLM_FIELDS)
    assert echoed_message(empty, "prompt", "no-reasoning") == {
        "role": "assistant",
        "content": "None",
    }
    parts = _message(content=[{"type": "text", "text": "x"}], reasoning_content="")
    assert echoed_message(parts, "prompt", "no-reasoning")["content"] == str(parts["content"])


def test_the_reasoning_stripping_handlers_are_those_of_the_pinned_release(data_source):
    """Every handler class whose response parsing calls the reference's reasoning-stripping
    helper, found by reading the handler sources."""
    found = set()
    for path in (data_source.unpacked_root / "bfcl_eval/model_handler").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name.startswith(
                    "_parse_query_response"
                ):
                    source = ast.unparse(method)
                    if "_add_reasoning_content_if_available" in source:
                        found.add(node.name)
    assert found == NO_REASONING_PARSERS


@pytest.mark.parametrize(
    ("name", "mode", "echo"),
    [
        ("openbmb/MiniCPM-SALA-FC", None, "as-returned"),
        ("kimi-k2-0905-preview", None, "as-returned"),
        ("grok-4-0709", None, "no-reasoning"),
        ("grok-4-0709-FC", None, "no-reasoning"),
        ("DeepSeek-V3.2-Exp-FC", None, "no-reasoning"),
        ("Ling/ling-lite-v1.5", None, "no-reasoning"),  # prompting: Ling strips
        ("Ling/ling-lite-v1.5", "fc", "as-returned"),  # its fc parsing is the plain one
    ],
)
def test_the_leaderboard_model_picks_the_echo(data_source, name, mode, echo):
    given: dict[str, Any] = {"mode": mode} if mode else {}
    settings = as_leaderboard_scores(
        Settings(model="m", leaderboard_model=name, **given), data_source
    )
    assert settings.history_echo == echo
    explicit = Settings(model="m", leaderboard_model=name, history_echo="no-reasoning")
    assert as_leaderboard_scores(explicit, data_source).history_echo == "no-reasoning"


def _completion(message: dict[str, Any]) -> bytes:
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    usage = {"prompt_tokens": 3, "completion_tokens": 2}
    return json.dumps({"choices": [choice], "usage": usage}).encode()


@pytest.mark.parametrize("echo", ["as-returned", "no-reasoning"])
def test_a_conversation_sends_back_the_echo_of_the_model_client(texts, monkeypatch, echo):
    """Through the endpoint client: the second request's history holds the first answer as
    the convention echoes it, and the stored answer keeps its reasoning apart."""
    first = _message(content="Sure.", reasoning_content="let me look", tool_calls=[CALL])
    first.update(VLLM_FIELDS)
    answers = [first, _message(content="done", tool_calls=[], **VLLM_FIELDS)]
    sent: list[dict[str, Any]] = []

    def complete(self, request, session=None):
        sent.append(request)
        return completion_record(_completion(answers[len(sent) - 1]), 0.1)

    monkeypatch.setattr(OpenAIChatModel, "_complete", complete)
    settings = EndpointSettings(model="m", base_urls=("http://127.0.0.1:9",), history_echo=echo)
    model = OpenAIChatModel(settings, ScoringOptions("fc", True), texts)
    entry = Entry(
        id="multi_turn_base_9001",
        question=[[{"role": "user", "content": "list"}]],
        involved_classes=["GorillaFileSystem"],
        initial_config={
            "GorillaFileSystem": {"root": {"r": {"type": "directory", "contents": {}}}}
        },
    )
    generation = Conversation(Task(entry, None), model, "fc", texts).run()
    model.close()
    assert generation.result == [[[{"ls": "{}"}], "done"]]
    assert generation.details["reasoning_content"] == [["let me look", ""]]
    history = sent[1]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[1] == echoed_message(first, "fc", echo)
    assert ("reasoning_content" in history[1]) == (echo == "as-returned")
    assert history[2]["tool_call_id"] == "c1"
