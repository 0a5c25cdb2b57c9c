"""The handler families one by one: what they read of raw answers, how the decoders treat odd
output (as data, bounded), the instruction texts read from the pinned release, the refusal of
other handlers, and the recording server's answers in each family's syntax."""

from __future__ import annotations

import pytest

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.handlers import decoder_for, family_for, supported_handlers, unsupported
from pytest_bfcl.handlers.base import split_reasoning
from pytest_bfcl.handlers.llama import Llama31Decoder
from pytest_bfcl.handlers.qwen import tool_call_bodies
from pytest_bfcl.handlers.texts import text_starting
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
