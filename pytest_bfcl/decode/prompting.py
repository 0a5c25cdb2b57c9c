"""Decoding prompting-mode (text) output: the bracket fix-up, the optional ``<TOOLCALL>`` tag and
the return formats (Python, JSON, verbose/concise XML, Java, JavaScript)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.execute import render_calls
from pytest_bfcl.decode.formats import (
    parse_concise_xml_calls,
    parse_json_calls,
    parse_verbose_xml_calls,
)
from pytest_bfcl.decode.python_calls import parse_python_calls
from pytest_bfcl.decode.treesitter import parse_java_calls, parse_javascript_calls

ReturnFormat = Literal["python", "json", "verbose_xml", "concise_xml"]
_CONFIG_KEYS = ("ret_fmt", "tool_call_tag", "func_doc_fmt", "prompt_fmt", "style")
_TAG = re.compile(r"<TOOLCALL>(.*?)</TOOLCALL>", re.DOTALL)
_XML_BLOCK = re.compile(r"<functions>(.*?)</functions>", re.DOTALL)
_JSON_LIST = re.compile(r"\[.*\]", re.DOTALL)


class PromptFormat(BaseModel):
    """A prompting-mode configuration (``ret_fmt=python&tool_call_tag=False&...``)."""

    model_config = ConfigDict(frozen=True)

    ret_fmt: ReturnFormat = "python"
    tool_call_tag: bool = False
    func_doc_fmt: Literal["python", "xml", "json"] = "json"
    prompt_fmt: Literal["plaintext", "markdown"] = "plaintext"
    style: Literal["classic", "experimental"] = "classic"

    @classmethod
    def parse(cls, config: str) -> PromptFormat:
        """Parse a config string; keys must appear exactly in the reference's order."""
        pairs = [part.split("=", 1) for part in config.split("&")]
        if [p[0] for p in pairs] != list(_CONFIG_KEYS) or any(len(p) != 2 for p in pairs):
            raise ValueError(f"malformed prompt config {config!r}: expected keys {_CONFIG_KEYS}")
        values = dict(pairs)
        if values["tool_call_tag"] not in ("True", "False"):
            raise ValueError(
                f"malformed prompt config {config!r}: tool_call_tag must be True/False"
            )
        return cls.model_validate({**values, "tool_call_tag": values["tool_call_tag"] == "True"})

    def to_config(self) -> str:
        return (
            f"ret_fmt={self.ret_fmt}&tool_call_tag={self.tool_call_tag}&func_doc_fmt="
            f"{self.func_doc_fmt}&prompt_fmt={self.prompt_fmt}&style={self.style}"
        )


DEFAULT_FORMAT = PromptFormat()


def _normalise(text: str) -> str:
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return text


def decode_prompting_ast(
    text: Any, fmt: PromptFormat = DEFAULT_FORMAT, language: str = "python"
) -> list[dict[str, Any]] | None:
    """Decode a prompting model's text into calls; raise :class:`DecodeError` if unreadable."""
    if not isinstance(text, str):
        raise DecodeError(f"expected text output, got {type(text).__name__}")
    text = _normalise(text)
    if fmt.tool_call_tag:
        match = _TAG.search(text)
        if not match:
            raise DecodeError("No tool call tag found in the output")
        text = match.group(1).strip()
    if language == "java":
        return parse_java_calls(text[1:-1])  # drop the brackets added above
    if language == "javascript":
        return parse_javascript_calls(text[1:-1])
    if fmt.ret_fmt == "python":
        return parse_python_calls(text.strip().strip("'"))
    if fmt.ret_fmt == "json":
        match = _JSON_LIST.search(text)
        return parse_json_calls(match.group(0) if match else text)
    match = _XML_BLOCK.search(text)
    if not match:
        raise DecodeError("No XML function call found: missing <functions> tag")
    if fmt.ret_fmt == "verbose_xml":
        return parse_verbose_xml_calls(match.group(0))
    return parse_concise_xml_calls(match.group(0))


def decode_prompting_execute(text: Any, tool_call_tag: bool = False) -> list[str]:
    """Decode text into executable call strings (multi-turn and agentic categories)."""
    calls = decode_prompting_ast(text, PromptFormat(tool_call_tag=tool_call_tag))
    return render_calls(calls or [])
