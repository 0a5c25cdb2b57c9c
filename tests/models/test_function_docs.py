"""What the model is shown: texts read from the pinned distribution, language hints, tools and
the prompting system prompt."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.dataset.texts import load_texts, module_constants
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    render_docs,
    system_prompt,
    to_openai_tools,
    with_language_hints,
)


@pytest.fixture(scope="module")
def texts(data_source):
    return load_texts(data_source.unpacked_root)


def test_texts_are_read_from_the_distribution(texts, data_source):
    constants = module_constants(
        data_source.unpacked_root / "bfcl_eval/constants/default_prompts.py"
    )
    assert (
        texts.default_config
        == PromptFormat().to_config()
        == constants["DEFAULT_SYSTEM_PROMPT_FORMAT"]
    )
    assert set(texts.styles) == {"classic", "experimental"}
    assert set(texts.layouts) == {"plaintext", "markdown"}
    assert set(texts.language_hints) == {"python", "java", "javascript"}
    assert all(h.startswith(" ") for h in texts.language_hints.values())
    assert texts.maximum_steps == 20
    assert "{functions}" in texts.added_functions_prompting


def test_java_hints_turn_every_parameter_into_a_string(texts, dataset):
    entry = next(
        e
        for e in dataset.entries("simple_java")
        if any(p["type"] == "ArrayList" for p in e.function[0].parameters.properties.values())
    )
    docs = with_language_hints(entry.function_sources(), "java", texts)
    props = docs[0]["parameters"]["properties"]
    assert all(p["type"] == "string" for p in props.values())
    assert all("items" not in p for p in props.values())
    assert docs[0]["description"].endswith(texts.language_hints["java"])
    # the loaded entry is untouched
    assert any(p["type"] == "ArrayList" for p in entry.function[0].parameters.properties.values())


def test_javascript_dict_properties_move_into_the_description(texts):
    docs = [
        {
            "name": "f",
            "description": "d",
            "parameters": {
                "type": "dict",
                "properties": {
                    "o": {
                        "type": "dict",
                        "description": "x",
                        "properties": {"k": {"type": "String"}},
                    }
                },
            },
        }
    ]
    out = with_language_hints(docs, "javascript", texts)
    schema = out[0]["parameters"]["properties"]["o"]
    assert "properties" not in schema and schema["type"] == "string"
    assert schema["description"].endswith(json.dumps({"k": {"type": "String"}}))


def test_openai_tools(texts):
    docs = [
        {
            "name": "math.area",
            "description": "d",
            "parameters": {
                "type": "dict",
                "properties": {
                    "r": {"type": "float", "description": "radius"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "pairs": {
                        "type": "array",
                        "items": {"type": "array", "items": {"type": "integer"}},
                    },
                    "opts": {
                        "type": "dict",
                        "properties": {"w": {"type": "float", "description": "w"}},
                    },
                    "odd": {"type": "weird"},
                    "none": {"description": "no type"},
                },
                "required": ["r"],
            },
        }
    ]
    tool = to_openai_tools(docs, texts)[0]
    assert tool["type"] == "function" and tool["function"]["name"] == "math_area"
    params = tool["function"]["parameters"]
    assert params["type"] == "object" and params["required"] == ["r"]
    p = params["properties"]
    assert p["r"] == {
        "type": "number",
        "format": "float",
        "description": "radius" + texts.float_hint,
    }
    assert p["tags"]["items"]["type"] == "string"
    assert p["pairs"]["items"]["items"]["type"] == "integer"
    assert p["opts"]["properties"]["w"]["type"] == "number"
    assert p["odd"]["type"] == "string" and p["none"]["type"] == "string"


def test_default_system_prompt_layout(texts, dataset):
    entry = dataset.entries("simple_python")[0]
    docs = with_language_hints(entry.function_sources(), "python", texts)
    prompt = system_prompt(docs, PromptFormat(), texts)
    style = texts.styles["classic"]
    assert prompt.startswith(style["persona"] + style["task"])  # no separator (reference quirk)
    assert texts.output_formats["python"] + ".  " in prompt  # empty param_types leaves two spaces
    assert prompt.endswith(json.dumps(docs, indent=4) + "\n")
    markdown = system_prompt(
        docs, PromptFormat(prompt_fmt="markdown", ret_fmt="verbose_xml", tool_call_tag=True), texts
    )
    assert "## Tool Call Format" in markdown and "<TOOLCALL>" in markdown
    assert texts.param_types["verbose_xml"] in markdown


def test_xml_and_python_doc_renderings():
    docs = [
        {
            "name": "f",
            "description": "D",
            "parameters": {
                "type": "dict",
                "properties": {
                    "a": {
                        "type": "string",
                        "description": "A",
                        "enum": ["x", "y"],
                        "default": "x, y",
                    },
                    "b": {
                        "type": "dict",
                        "description": "B",
                        "properties": {"c": {"type": "integer", "description": "C"}},
                        "required": [],
                    },
                    "l": {"type": "array", "items": {"type": "integer"}, "description": "L"},
                },
                "required": ["a"],
            },
        }
    ]
    xml = render_docs(docs, "xml")
    assert (
        '    <param name="a" type="string" required="true" default="\'x y\'">\n' in xml
    )  # commas dropped
    assert "      <desc>A Enum values: ['x', 'y'].</desc>\n" in xml
    assert '        <param name="c" type="integer" required="false">\n' in xml
    assert '<param name="l" type="array[integer]" required="false">' in xml
    python = render_docs(docs, "python")
    assert "        a (str, default='x, y'): A Enum values: ['x', 'y'].\n" in python
    assert "            c (int): C\n" in python
    assert "        l (list[int]): L\n" in python
    assert python.endswith('    """\n\n\n\n')


def test_insert_system_prompt():
    assert insert_system_prompt([{"role": "user", "content": "q"}], "S")[0] == {
        "role": "system",
        "content": "S",
    }
    merged = insert_system_prompt(
        [{"role": "system", "content": "old"}, {"role": "user", "content": "q"}], "S"
    )
    assert merged[0]["content"] == "S\n\nold" and len(merged) == 2
