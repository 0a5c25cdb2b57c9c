"""Decoding prompting-mode (text) output: the bracket fix-up, the optional ``<TOOLCALL>`` tag and
the return formats (Python, JSON, verbose/concise XML, Java, JavaScript)."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.dataset.prompt_format import DEFAULT_FORMAT, PromptFormat
from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.execute import render_calls
from pytest_bfcl.decode.formats import (
    parse_concise_xml_calls,
    parse_json_calls,
    parse_verbose_xml_calls,
)
from pytest_bfcl.decode.limits import check_calls, check_text_length
from pytest_bfcl.decode.python_calls import parse_python_calls
from pytest_bfcl.decode.treesitter import parse_java_calls, parse_javascript_calls


def _normalise(text: str) -> str:
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return text


# The reference finds these spans with regular expressions (``<TOOLCALL>(.*?)</TOOLCALL>``,
# ``<functions>(.*?)</functions>``, ``\[.*\]``, all DOTALL). A search for them retries every
# start position, quadratic on text with many openers and no closer; the ``str.find`` versions
# below return the same spans in linear time.


def _tag_body(text: str, opening: str, closing: str) -> tuple[int, int] | None:
    """Start and end of what lies between the first ``opening`` and the first ``closing`` after
    it (the regex's leftmost, shortest match), or ``None``."""
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else (start + len(opening), end)


def _json_list_span(text: str) -> str | None:
    r"""From the first ``[`` to the last ``]`` after it (the greedy ``\[.*\]``), or ``None``."""
    start = text.find("[")
    end = text.rfind("]")
    return text[start : end + 1] if 0 <= start < end else None


def decode_prompting_ast(
    text: Any, fmt: PromptFormat = DEFAULT_FORMAT, language: str = "python"
) -> list[dict[str, Any]] | None:
    """Decode a prompting model's text into calls; raise :class:`DecodeError` if unreadable."""
    if not isinstance(text, str):
        raise DecodeError(f"expected text output, got {type(text).__name__}")
    check_text_length(text)
    calls = _decode_text(_normalise(text), fmt, language)
    if calls is not None:
        check_calls(calls)
    return calls


def _decode_text(text: str, fmt: PromptFormat, language: str) -> list[dict[str, Any]] | None:
    if fmt.tool_call_tag:
        span = _tag_body(text, "<TOOLCALL>", "</TOOLCALL>")
        if span is None:
            raise DecodeError("No tool call tag found in the output")
        text = text[span[0] : span[1]].strip()
    if language == "java":
        return parse_java_calls(text[1:-1])  # drop the brackets added above
    if language == "javascript":
        return parse_javascript_calls(text[1:-1])
    if fmt.ret_fmt == "python":
        return parse_python_calls(text.strip().strip("'"))
    if fmt.ret_fmt == "json":
        found = _json_list_span(text)
        return parse_json_calls(found if found is not None else text)
    span = _tag_body(text, "<functions>", "</functions>")
    if span is None:
        raise DecodeError("No XML function call found: missing <functions> tag")
    block = text[span[0] - len("<functions>") : span[1] + len("</functions>")]
    if fmt.ret_fmt == "verbose_xml":
        return parse_verbose_xml_calls(block)
    return parse_concise_xml_calls(block)


def decode_prompting_execute(text: Any, tool_call_tag: bool = False) -> list[str]:
    """Decode text into executable call strings (multi-turn and agentic categories)."""
    calls = decode_prompting_ast(text, PromptFormat(tool_call_tag=tool_call_tag))
    return render_calls(calls or [])
