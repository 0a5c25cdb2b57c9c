"""Prompting-mode decoding of Python call syntax (the reference's rules, quirks included)."""

import pytest

from pytest_bfcl.decode import DecodeError, PromptFormat, decode_prompting_ast
from pytest_bfcl.decode.execute import render_calls
from pytest_bfcl.decode.prompting import decode_prompting_execute


def decode(text: str, **fmt):
    return decode_prompting_ast(text, PromptFormat(**fmt))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[f(a=1)]", [{"f": {"a": 1}}]),
        ("f(a=1)", [{"f": {"a": 1}}]),  # brackets are added
        ("```\n[f(a=1)]\n```", [{"f": {"a": 1}}]),  # plain fences are stripped
        ("[a.b.c(x='s')]", [{"a.b.c": {"x": "s"}}]),
        (
            "[f(a=1), g(b=[1, 2], c={'k': (1, 2)})]",
            [{"f": {"a": 1}}, {"g": {"b": [1, 2], "c": {"k": (1, 2)}}}],
        ),
        ("[f(1, a=2)]", [{"f": {"a": 2}}]),  # positional arguments are dropped
        ("[f(a=+1)]", [{"f": {"a": -1}}]),  # any unary operator negates
        ("[f(a=not True)]", [{"f": {"a": -1}}]),
        ("[f(a=true, b=null)]", [{"f": {"a": "true", "b": "null"}}]),  # bare names are text
        ("[f(a=1+2, b='x'+'y', c=2**3)]", [{"f": {"a": 3, "b": "xy", "c": 8}}]),
        ("[f(a=g(1, 2))]", [{"f": {"a": "g(1, 2)"}}]),
        ("[f(a=g(x=1))]", [{"f": {"a": {"g": {"x": 1}}}}]),
        ("[f(a=x[0])]", [{"f": {"a": "x[0]"}}]),
        ("[f(a=...)]", [{"f": {"a": "..."}}]),
        ("[]", []),
        ("<TOOLCALL>f(a=1)</TOOLCALL>", None),
    ],
)
def test_python_calls(text, expected):
    if expected is None:  # a tag without tag mode: the text is not Python
        with pytest.raises(DecodeError):
            decode(text)
    else:
        assert decode(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "```python\n[f(a=1)]\n```",  # a language tag after the fence is not stripped
        "I cannot help with that",
        "[None]",
        "[f(a=lambda: 1)]",
        "[f(a=math.pi)]",
        "[f(a=1 < 2)]",
        "[f(a=[x for x in y])]",
        "[f(a=-(-1))]",
        "(f(a=1), g())",  # brackets are added around it, and a tuple is not a call
        "[f(a=1 + x)]",  # names inside arithmetic fail instead of being looked up
        "[f(a=__import__('os').system('true') + 1)]",
        "[f(a=10 ** 10 ** 10)]",  # bounded: refused, not computed
        "[f(a='x' * 10 ** 9)]",
    ],
)
def test_python_decode_failures(text):
    with pytest.raises(DecodeError):
        decode(text)


def test_tool_call_tag():
    assert decode("Sure <TOOLCALL>[f(a=1)]</TOOLCALL>", tool_call_tag=True) == [{"f": {"a": 1}}]
    with pytest.raises(DecodeError, match="tag"):
        decode("[f(a=1)]", tool_call_tag=True)


def test_non_text_output_is_a_decode_error():
    with pytest.raises(DecodeError):
        decode_prompting_ast(None)


def test_execute_rendering():
    calls = decode("[f(a=1, b='s', c={'k': 1}, d=[1, 2], e=g(x=1))]")
    assert render_calls(calls) == ["f(a=1, b='s', c={'k': 1}, d=[1, 2], e=g(x=1))"]
    assert decode_prompting_execute("[]") == []


def test_execute_rendering_quirks():
    assert render_calls([{"f": {"a": {"x": {}}}}]) == ["f(a=x())"]
    with pytest.raises(DecodeError):
        decode_prompting_execute("[f(a={})]")


def test_prompt_config_round_trip():
    config = (
        "ret_fmt=json&tool_call_tag=True&func_doc_fmt=xml&prompt_fmt=markdown&style=experimental"
    )
    fmt = PromptFormat.parse(config)
    assert fmt.ret_fmt == "json" and fmt.tool_call_tag is True
    assert fmt.to_config() == config
    with pytest.raises(ValueError):
        PromptFormat.parse(
            "tool_call_tag=True&ret_fmt=json&func_doc_fmt=xml&prompt_fmt=markdown&style=classic"
        )
