"""The families added for Falcon 3 (the checkpoint's own chat template), Granite 4, Granite
function calling, Phi FC and FunctionGemma: what the goldens do not reach (a refused or broken
template, the sandbox, results written as FunctionGemma's notation, literals never evaluated,
scanners bounded on odd output) and the completions route end to end with Falcon 3's
template."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers import decoder_for, family_for
from pytest_bfcl.handlers.chat_template import load_chat_template
from pytest_bfcl.handlers.functiongemma import ArgumentScanner, functiongemma_calls
from pytest_bfcl.handlers.granite_fc import openapi_functions
from pytest_bfcl.testing.completions_server import CompletionsServer

FALCON = Path(__file__).parents[1] / "data" / "handlers" / "falcon3"
FMT = PromptFormat()
DOC = {
    "name": "math.hypot",
    "description": "d <b>&",
    "parameters": {
        "type": "dict",
        "properties": {"x": {"type": "float", "description": "x"}},
        "required": ["x"],
    },
}


def test_every_new_handler_has_a_family_and_its_own_decoder(data_source):
    for handler in (
        "Falcon3FCHandler",
        "Granite4FCHandler",
        "GraniteFunctionCallingHandler",
        "PhiFCHandler",
        "FunctionGemmaHandler",
    ):
        assert decoder_for(handler) is not None, handler


def test_falcon_needs_the_checkpoints_folder_in_one_line(data_source, tmp_path):
    root = data_source.unpacked_root
    with pytest.raises(DatasetError, match="--bfcl-tokenizer") as missing:
        family_for("Falcon3FCHandler", root, "tiiuae/Falcon3-7B-Instruct")
    assert "\n" not in str(missing.value)
    with pytest.raises(DatasetError, match=r"tokenizer_config\.json is missing"):
        family_for("Falcon3FCHandler", root, "m", tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>"}))
    with pytest.raises(DatasetError, match=r"tokenizer_config\.json has no chat_template"):
        family_for("Falcon3FCHandler", root, "m", tmp_path)


def test_falcon_renders_its_template_with_the_tools_as_transformers_does(data_source):
    family = family_for("Falcon3FCHandler", data_source.unpacked_root, "m", FALCON)
    prompt = family.render([{"role": "user", "content": "q"}], [DOC])
    assert prompt.startswith("<|system|>\nYou are a Falcon assistant")
    assert '<tools>[\n  {\n    "name": "math.hypot",\n    "description": "d <b>&"' in prompt
    assert prompt.endswith("<|user|>\nq\n<|assistant|>\n")
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "text", "tool_calls": None},  # None keys dropped
        {"role": "tool", "name": "f()", "content": "r"},
    ]
    later = family.render(history, [DOC])
    assert later.endswith(
        "<|assistant|>\ntext<|endoftext|>\n<|assistant|>\n<tool_response>\nr\n"
        "</tool_response>\n<|assistant|>\n"
    )


def test_a_template_that_fails_or_escapes_the_sandbox_is_one_line(tmp_path):
    for source, words in (
        ("{{ raise_exception('no tools here') }}", "no tools here"),
        ("{{ ''.__class__.__mro__ }}", "failed"),
        ("{% if %}", "does not parse"),
    ):
        (tmp_path / "chat_template.jinja").write_text(source)
        (tmp_path / "tokenizer_config.json").write_text("{}")
        template = load_chat_template(tmp_path)
        with pytest.raises(DatasetError, match=words) as failed:
            template.render([{"role": "user", "content": "q"}], [])
        assert "\n" not in str(failed.value) and str(tmp_path) in str(failed.value)


def test_named_templates_pick_tool_use_when_there_are_tools(tmp_path):
    named = [{"name": "default", "template": "plain"}, {"name": "tool_use", "template": "tools"}]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": named}))
    assert load_chat_template(tmp_path).render([], [DOC]) == "tools"
    assert load_chat_template(tmp_path, tools=False).render([], None) == "plain"


def test_granite_fc_shows_openapi_functions_and_leaves_the_docs_alone():
    docs = [json.loads(json.dumps(DOC))]
    shown = openapi_functions(docs, " (a float)")
    assert shown[0]["name"] == "math_hypot"
    assert shown[0]["parameters"]["type"] == "object"
    assert shown[0]["parameters"]["properties"]["x"] == {
        "type": "number",
        "description": "x (a float)",
        "format": "float",
    }
    assert docs == [DOC]


def test_functiongemma_writes_a_json_result_in_its_notation(data_source):
    family = family_for("FunctionGemmaHandler", data_source.unpacked_root, "m")
    result = {"role": "tool", "name": "f()", "content": '{"b": [1, "x", null], "a": {"z": true}}'}
    prompt = family.render([{"role": "user", "content": "q"}, result], [])
    assert (
        "<start_function_response>response:f(){a:{z:true},b:[1,<escape>x<escape>,null]}"
        "<end_function_response><start_of_turn>model\n"
    ) in prompt


def test_functiongemma_scanner_reads_odd_arguments_as_data_and_quickly():
    assert ArgumentScanner().read("{a:__import__('os').system('true')}") == {
        "a": "__import__('os').system('true')"
    }
    assert ArgumentScanner().read("{1:x,true:y}") == {"1": "x", "True": "y"}
    start = time.perf_counter()
    deep = "{a:" * 100_000
    assert isinstance(ArgumentScanner().read(deep), dict)
    calls = functiongemma_calls("<start_function_call>call:f" * 7_000)  # none closed
    assert calls == [] and time.perf_counter() - start < 10
    with pytest.raises(DecodeError, match="characters long"):
        functiongemma_calls("<start_function_call>call:f" * 50_000)


def test_phi_fc_reads_a_literal_call_but_never_evaluates_one(data_source):
    family = family_for("PhiFCHandler", data_source.unpacked_root, "microsoft/Phi-4-mini-instruct")
    read = family.read("<|tool_call|>[\"{'name': 'f', 'arguments': {'x': 1}}\"]<|/tool_call|>")
    assert read.text == [{"f": {"x": 1}}]
    with pytest.raises(DecodeError):
        family.read("<|tool_call|>[\"__import__('os').system('true')\"]<|/tool_call|>")
    assert family.decoder.decode_execute(read.text) == ["f(x=1)"]


def test_granite_fc_keeps_pieces_that_are_not_json_as_text(data_source):
    family = family_for("GraniteFunctionCallingHandler", data_source.unpacked_root, "m")
    text = '<function_call> {"name": "f", "arguments": {"x": 1}} <function_call> oops'
    assert family.decoder.decode_ast(text, "python", FMT) == [{"f": {"x": 1}}, "oops"]
    with pytest.raises(DecodeError):
        family.decoder.decode_ast('<function_call> {"name": ["f"]}', "python", FMT)


IDS = ("simple_python_0", "simple_python_1")


@pytest.mark.extra("handlers")
def test_falcon_asks_completions_with_its_template_and_passes(
    pytester, dataset, data_source, tmp_path
):
    folder = tmp_path / "falcon3"
    shutil.copytree(FALCON, folder)
    answers = dataset.answers("simple_python")

    def answer(body):
        entry = next(i for i in IDS if _question(dataset, i) in body["prompt"])
        name, params = next(iter(answers[entry].ground_truth[0].items()))
        args = {k: v[0] for k, v in params.items() if v and v[0] != ""}
        return f"<tool_call>\n{json.dumps([{'name': name, 'arguments': args}])}\n</tool_call>"

    with CompletionsServer(answer) as server:
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model", f"--bfcl-base-url={server.base_url}",
            "--bfcl-leaderboard-model=tiiuae/Falcon3-7B-Instruct-FC",
            "--bfcl-category=simple_python", f"--bfcl-data={data_source.data_dir}",
            "--bfcl-no-cache", f"--bfcl-tokenizer={folder}",
            *(f"bfcl/simple_python::{i}" for i in IDS), "-p", "no:cacheprovider",
        )  # fmt: skip
    assert result.parseoutcomes().get("passed") == len(IDS), result.stdout.str()[-3000:]
    assert len(server.requests) == len(IDS) and server.tokenized == []
    for body in server.requests:
        assert body["prompt"].startswith("<|system|>\nYou are a Falcon assistant")
        assert body["prompt"].endswith("\n<|assistant|>\n")
        assert body["max_tokens"] == 4096  # a short prompt in Falcon's 32,768-token window


def test_falcon_without_its_folder_is_refused_in_one_line(pytester, data_source):
    result = pytester.runpytest(
        "--bfcl-model=test-model", "--bfcl-base-url=http://127.0.0.1:9/v1",
        "--bfcl-leaderboard-model=tiiuae/Falcon3-7B-Instruct-FC",
        f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider",
    )  # fmt: skip
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "Falcon3FCHandler renders its prompt with the checkpoint's own chat template" in err
    assert "--bfcl-tokenizer" in err and "Traceback" not in err


def _question(dataset, entry_id):
    entry = next(e for e in dataset.entries("simple_python") if e.id == entry_id)
    return entry.question[0][-1].content


@pytest.mark.parametrize(
    "handler",
    [
        "Falcon3FCHandler",
        "Granite4FCHandler",
        "GraniteFunctionCallingHandler",
        "PhiFCHandler",
        "FunctionGemmaHandler",
    ],
)
def test_the_recording_server_answers_each_new_family_in_its_syntax(data_source, handler):
    from pytest_bfcl.testing.completions_answers import completion_text

    family = family_for(handler, data_source.unpacked_root, "m", FALCON)
    query = [{"role": "user", "content": "q"}]
    answer = family.read(completion_text(family.render(query, [DOC])))
    assert family.decoder.decode_execute(answer.text) == ["ls(a=True)"]
    history = [*query, answer.echo, *family.tool_results(["ls(a=True)"], ["r"])]
    done = family.read(completion_text(family.render(history, [DOC])))
    try:
        calls = family.decoder.decode_execute(done.text)
    except DecodeError:
        calls = []  # a text answer the handler cannot decode ends the turn as well
    assert calls == []
    later = [*history, done.echo, {"role": "user", "content": "again"}]
    again = family.read(completion_text(family.render(later, [DOC])))
    assert family.decoder.decode_execute(again.text) == ["ls(a=True)"]


def test_a_template_sees_reasoning_under_each_name_as_transformers_passes_it(tmp_path):
    source = "{% for m in messages %}{{ m.thinking }}|{{ m.reasoning_content }};{% endfor %}"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": source}))
    template = load_chat_template(tmp_path)
    messages = [{"role": "assistant", "content": "a", "reasoning": "r"}, {"role": "user"}]
    assert template.render(messages, None) == "r|r;|;"
