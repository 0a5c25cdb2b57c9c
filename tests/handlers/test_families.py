"""The handler families one by one: what they read of raw answers, how the decoders treat odd
output (as data, bounded), the instruction texts read from the pinned release, the refusal of
other handlers, and the recording server's answers in each family's syntax."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers import decoder_for, family_for, supported_handlers, unsupported
from pytest_bfcl.handlers.base import split_reasoning
from pytest_bfcl.handlers.llama import Llama31Decoder
from pytest_bfcl.handlers.qwen import tool_call_bodies
from pytest_bfcl.handlers.texts import init_value, text_starting
from pytest_bfcl.testing.completions_answers import DONE, completion_text

FMT = PromptFormat()


def test_split_reasoning_keeps_the_first_block_and_answers_after_the_last():
    assert split_reasoning("<think>\na\n</think>\n\nx</think>\n\nanswer") == ("answer", "a")
    assert split_reasoning("no reasoning") == ("no reasoning", "")
    assert split_reasoning("<think>unclosed") == ("<think>unclosed", "")


def test_tool_call_bodies_follow_the_lazy_pattern():
    one = '<tool_call>\n{"a": 1}\n</tool_call>'
    assert tool_call_bodies(one + one) == ['{"a": 1}', '{"a": 1}']
    assert tool_call_bodies("<tool_call>\n\n</tool_call>") == [""]
    assert tool_call_bodies("<tool_call>\n</tool_call>") == []  # needs a newline each side
    assert tool_call_bodies('<tool_call>\n{"a": 1}') == []  # unclosed
    assert tool_call_bodies("<tool_call>\n" * 50_000) == []  # many openings, none closed


def test_qwen_fc_reads_calls_in_reasoning_into_the_history_but_not_the_answer(data_source):
    family = family_for("QwenFCHandler", data_source.unpacked_root, "Qwen/Qwen3-8B")
    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    answer = family.read(f"<think>\n{call}\n</think>\n\nNo call.")
    assert answer.text == "No call." and answer.echo["tool_calls"] == [
        {"name": "f", "arguments": {}}
    ]
    assert family.decoder.decode_ast(answer.text, "python", FMT) == []


def test_llama_3_1_reads_literals_and_never_evaluates():
    decoder = Llama31Decoder()
    assert decoder.decode_ast("[{'name': 'f', 'parameters': {'x': 1 + 2}}]", "python", FMT) == [
        {"f": {"x": 3}}
    ]
    for text in (
        "__import__('os').system('true')",
        "[{'name': f, 'parameters': {}}]",
        '{"name": "f", "parameters": {"x": true}}',  # a name, as Python reads JSON's true
        "[" * 500,
    ):
        with pytest.raises(DecodeError):
            decoder.decode_ast(text, "python", FMT)


def test_only_handlers_with_their_own_decoders_replace_the_modes():
    assert decoder_for("QwenFCHandler") is not None and decoder_for("LlamaHandler_3_1")
    assert decoder_for("QwenHandler") is None  # decodes as the prompting decoders
    assert decoder_for(None) is None and decoder_for("QwenAgentThinkHandler") is None


def test_other_handlers_are_refused_naming_the_families_that_work(data_source):
    message = unsupported("QwenAgentThinkHandler")
    assert all(handler in message for handler in supported_handlers())
    with pytest.raises(LookupError, match="QwenAgentThinkHandler"):
        family_for("QwenAgentThinkHandler", data_source.unpacked_root)


def test_instruction_texts_come_from_the_pinned_release(data_source):
    where = ("llama_3_1", "LlamaHandler_3_1", "_format_prompt")
    assert text_starting(data_source.unpacked_root, where, "Today Date:").startswith(
        "Today Date: 26 Jul 2024"
    )
    with pytest.raises(DatasetError, match="no text beginning"):
        text_starting(data_source.unpacked_root, where, "Not in the handler")


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        ("<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n", "[ls(a=True)]"),
        ("<tools>\n</tools><|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n", "<tool_call>"),
        (
            "<|im_start|>user\n<tool_response>\nr\n</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n",
            DONE,
        ),
        ("Environment: ipython\n<|start_header_id|>assistant<|end_header_id|>\n\n", '"name": "ls"'),
        (
            "<|start_header_id|>ipython<|end_header_id|>\n\nr<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n",
            DONE,
        ),
        (
            "<|start_header_id|>user<|end_header_id|>\n\nq<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n",
            "[ls(a=True)]",
        ),
    ],
)
def test_the_recording_servers_answers_follow_the_prompts_markup(prompt, answer):
    assert answer in completion_text(prompt)


def test_a_conversations_prompts_share_the_text_before_the_first_assistant_turn():
    from pytest_bfcl.testing.completions_answers import conversation_prefix

    first = (
        "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
    )
    later = first + "[ls()]<|im_end|>\n<|im_start|>user\n<tool_response>\nr\n</tool_response>"
    assert (
        conversation_prefix(first) == conversation_prefix(later) == first.split("<|im_start|>a")[0]
    )
    assert conversation_prefix("<bos><start_of_turn>user\nq") == "<bos><start_of_turn>user\nq"


def test_the_recording_server_answers_granite_prompts_without_an_assistant_opening():
    query = "<|start_of_role|>user<|end_of_role|>q<|end_of_text|>\n"
    results = query + "<|start_of_role|>tool<|end_of_role|>r<|end_of_text|>\n"
    assert completion_text(query).startswith("<|tool_call|>[")
    assert completion_text(results) == DONE


def test_glm_sends_the_stop_token_ids_its_handler_sets(data_source):
    family = family_for("GLMHandler", data_source.unpacked_root, "THUDM/glm-4-9b-chat")
    fields = family.request_fields()
    assert fields == {"stop_token_ids": [151329, 151336, 151338]}
    fields["stop_token_ids"].append(0)  # a request's copy: the next request is unchanged
    assert family.request_fields()["stop_token_ids"] == [151329, 151336, 151338]
    assert family_for("QwenFCHandler", data_source.unpacked_root).request_fields() == {}


def test_a_handler_that_sets_no_such_value_is_refused_in_one_line(data_source):
    with pytest.raises(DatasetError, match="sets no literal stop_token_ids"):
        init_value(data_source.unpacked_root, "minicpm", "MiniCPMHandler", "stop_token_ids")


def test_mistral_gives_each_call_an_id_drawn_from_the_call_and_feeds_results_back_by_it(
    data_source,
):
    family = family_for("MistralFCHandler", data_source.unpacked_root)
    raw = '[{"name": "ls", "arguments": {"a": true}}, {"name": "pwd", "arguments": {}}]'
    answer = family.read(raw)
    assert answer.text == [{"ls": {"a": True}}, {"pwd": {}}]
    shown = json.loads(answer.echo["content"].removeprefix("[TOOL_CALLS]"))
    ids = [call["id"] for call in shown]
    assert all(len(i) == 9 and i.isalnum() for i in ids) and ids[0] != ids[1]
    assert family.read(raw).echo == answer.echo  # the same answer, the same prompt after it
    calls = family.decoder.decode_execute(answer.text)
    results = family.tool_results(calls, ["r0", "r1"])
    assert [r["tool_call_id"] for r in results] == ids
    assert family.read("Plain text.").text == "Plain text."
    with pytest.raises(DecodeError):
        family.read('{"name": "ls", "arguments": {}}')  # an object: the handler fails on it


@pytest.mark.parametrize(
    ("handler", "text"),
    [
        ("GLMHandler", "f\n" + "[" * 5000),
        ("GLMHandler", "f\n" + "1" * 300_000),
        ("MistralFCHandler", "[" * 5000),
        ("ThinkAgentHandler", "<think></think>" + "[" * 5000),
        ("BitAgentHandler", "[" * 5000),
        ("BitAgentHandler", '{"name": "f", "arguments": {}}; {"name": "g", "arguments": {}}'),
    ],
)
def test_the_new_decoders_fail_odd_output_as_the_models_failure(data_source, handler, text):
    family = family_for(handler, data_source.unpacked_root)
    with pytest.raises(DecodeError):
        answer = family.read(text)
        family.decoder.decode_ast(answer.text, "python", FMT)


def test_which_of_the_new_families_decode_their_own_way():
    for handler in ("GLMHandler", "MistralFCHandler", "BitAgentHandler", "ThinkAgentHandler"):
        assert decoder_for(handler) is not None, handler
    for handler in ("PelicanVLFCHandler", "NanbeigeFCHandler"):
        assert decoder_for(handler) is decoder_for("QwenFCHandler")
    for handler in ("MiniCPMHandler", "BielikHandler", "DeepseekReasoningHandler"):
        assert decoder_for(handler) is None, handler  # the prompting decoders
    assert decoder_for("MistralFCHandler", [{"f": {}}]) is not None  # it stores calls


def test_without_functions_pelican_and_nanbeige_open_with_their_default_system_turn(
    data_source,
):
    question = [{"role": "user", "content": "hi"}]
    pelican = family_for("PelicanVLFCHandler", data_source.unpacked_root).render(question, [])
    assert pelican.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
    nanbeige = family_for("NanbeigeFCHandler", data_source.unpacked_root).render(question, [])
    assert nanbeige.startswith("<|im_start|>system\n ") and nanbeige.count("<|im_end|>") == 2
    system = [{"role": "system", "content": "S"}, *question]
    for handler in ("PelicanVLFCHandler", "NanbeigeFCHandler"):
        prompt = family_for(handler, data_source.unpacked_root).render(system, [])
        assert prompt.startswith("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi")


def test_deepseek_makes_system_messages_user_ones_joined_with_the_question():
    from pytest_bfcl.handlers.deepseek import DeepseekReasoningFamily

    family = DeepseekReasoningFamily(Path("."))
    turn = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]
    assert family.prepare_turn(turn) == [{"role": "user", "content": "S\n\nQ"}]
    assert turn[0]["role"] == "system"  # the question itself is left as it is
    answer = family.read("<think>\nplan\n</think>\n\n[f()]")
    assert answer.text == "\n\n[f()]" and answer.echo["content"].startswith("<think>")


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        ("[gMASK]<sop><|system|>\nt<|user|>\nq<|assistant|>", 'ls\n{"a": true}'),
        ('<|user|>\nq<|assistant|>\nls\n{"a": true}<|tool|>\nr<|assistant|>', DONE),
        ("<|user|>q<|end|><|assistant|>", "[ls(a=True)]"),  # Phi-4-mini, not GLM
    ],
)
def test_the_recording_server_answers_glm_prompts_in_glms_syntax(prompt, answer):
    assert completion_text(prompt) == answer
