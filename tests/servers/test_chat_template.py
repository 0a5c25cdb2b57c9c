"""The SmolLM2 tools chat template the plugin ships for vLLM's CPU route (docs/vllm.md): found
where an installed plugin finds its data, it offers the tools inside <tools> and renders an
answer's calls as the JSON list inside <tool_call> that vLLM's xlam parser reads."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.resources import project_data_file

jinja2 = pytest.importorskip("jinja2")


def render(messages, tools=None, add_generation_prompt=True) -> str:
    template = project_data_file("smollm2_tools.jinja").read_text(encoding="utf-8")
    environment = jinja2.Environment()
    environment.filters["tojson"] = json.dumps
    return environment.from_string(template).render(
        messages=messages, tools=tools, add_generation_prompt=add_generation_prompt
    )


def test_the_tools_are_offered_and_a_call_rendered_as_the_parser_reads_it():
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    call = {"id": "c0", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
    text = render(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "content": "sunny"},
        ],
        tools=[tool],
    )
    tools = text.split("<tools>", 1)[1].split("</tools>", 1)[0]
    assert "get_weather" in tools
    calls = text.rsplit("<tool_call>", 1)[1].split("</tool_call>", 1)[0]  # the answer, last
    assert json.loads(calls) == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    assert text.rstrip().endswith("<|im_start|>assistant")


def test_without_tools_no_tools_section_is_offered():
    text = render([{"role": "user", "content": "hi"}])
    assert "<tools>" not in text and "<|im_start|>user\nhi<|im_end|>" in text
