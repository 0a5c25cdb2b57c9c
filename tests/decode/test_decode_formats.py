"""JSON and XML return formats, native tool calls, and Java/JavaScript prompting syntax."""

import pytest

from pytest_bfcl.decode import DecodeError, PromptFormat, decode_fc_ast, decode_fc_execute
from pytest_bfcl.decode.prompting import decode_prompting_ast


def test_json_format():
    fmt = PromptFormat(ret_fmt="json")
    text = 'Here: ```json\n[{"function": "f", "parameters": {"a": 1}}, {"function": "g", "parameters": {}}]\n```'
    assert decode_prompting_ast(text, fmt) == [{"f": {"a": 1}}, {"g": {}}]


def test_json_format_quirks():
    fmt = PromptFormat(ret_fmt="json")
    assert decode_prompting_ast("[{not json}]", fmt) == []  # unreadable JSON reads as no calls
    assert decode_prompting_ast('[1, {"function": "f", "parameters": {}}]', fmt) == [{"f": {}}]
    with pytest.raises(DecodeError):
        decode_prompting_ast('[{"function": "f"}]', fmt)  # no "parameters" key


def test_verbose_xml():
    fmt = PromptFormat(ret_fmt="verbose_xml")
    text = (
        'x <functions><function name="f"><params>'
        '<param name="a" value="3" type="integer"/><param name="b" value="[1, 2]" type="array"/>'
        '<param name="c" value="TRUE" type="boolean"/><param name="d" value="hi"/>'
        "</params></function></functions> y"
    )
    assert decode_prompting_ast(text, fmt) == [{"f": {"a": 3, "b": [1, 2], "c": True, "d": "hi"}}]


def test_concise_xml():
    fmt = PromptFormat(ret_fmt="concise_xml", tool_call_tag=True)
    text = (
        '<TOOLCALL><functions><function name="f"><param name="a" type="float"> 2.5 </param>'
        '<param name="b" type="dict">{"k": 1}</param></function></functions></TOOLCALL>'
    )
    assert decode_prompting_ast(text, fmt) == [{"f": {"a": 2.5, "b": {"k": 1}}}]


@pytest.mark.parametrize(
    "text",
    [
        '<functions><function name="f"><param name="a" type="integer">x</param></function></functions>',
        "<functions><function><param/></function></functions>",
        "no xml here",
        '<functions><!DOCTYPE x [<!ENTITY a "b">]><function name="&a;"/></functions>',
    ],
)
def test_xml_failures(text):
    with pytest.raises(DecodeError):
        decode_prompting_ast(text, PromptFormat(ret_fmt="concise_xml"))


def test_fc_decode():
    result = [{"f_g": '{"a": 1, "b": [true, null]}'}, {"h": "{}"}]
    assert decode_fc_ast(result) == [{"f_g": {"a": 1, "b": [True, None]}}, {"h": {}}]
    assert decode_fc_ast("") == []
    for bad in ("I cannot", [{"f": "{bad json"}], [{}], [{"f": {"a": 1}}], None):
        with pytest.raises(DecodeError):
            decode_fc_ast(bad)


def test_fc_execute_rendering():
    result = [{"f": '{"a": 1, "b": "s", "c": {"k": true}, "d": null}'}]
    assert decode_fc_execute(result) == ["f(a=1,b='s',c={'k': True},d=None)"]
    assert decode_fc_execute({"g": {"x": 2}}) == ["g(x=2)"]
    assert decode_fc_execute("") == []
    with pytest.raises(DecodeError):
        decode_fc_execute("text")


def test_java_prompting():
    out = decode_prompting_ast(
        '[Foo.bar(a="s", b=5, c=new int[]{1, 2, 3}, d=new HashMap<String, Object>() {{ put("k", 1); }})]',
        language="java",
    )
    assert out == [
        {
            "Foo.bar": {
                "a": "s",
                "b": "5",
                "c": "new int[]{1,2,3}",
                "d": "new HashMap<String,Object>()",  # the anonymous body is dropped
            }
        }
    ]
    with pytest.raises(DecodeError):
        decode_prompting_ast("[f(1, 2)]", language="java")
    with pytest.raises(DecodeError, match="same name"):
        decode_prompting_ast("[f(a=1, a=2)]", language="java")


def test_javascript_prompting():
    out = decode_prompting_ast("[fn(a='s', b=[1, 2], c=true)]", language="javascript")
    assert out == [{"fn": {"a": "s", "b": "[1, 2]", "c": "true"}}]
    assert decode_prompting_ast("[fn(x)]", language="javascript") == [{"fn": {None: "x"}}]
    assert decode_prompting_ast("[let x = 1]", language="javascript") is None
    with pytest.raises(DecodeError):
        decode_prompting_ast("[fn(a=]", language="javascript")
