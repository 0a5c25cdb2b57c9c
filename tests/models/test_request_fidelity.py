"""Requests as the leaderboard's chat-completions handler sends them: its parameters (read
from the pinned release's handler source with ``ast``) and the assistant message echoed into a
conversation's history."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.models.endpoint_request import EndpointSettings, RequestBuilder
from pytest_bfcl.models.leaderboard_wire import REFERENCE_TEMPERATURE
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
