"""Prompting-mode configurations: how calls are asked for and written as text (return format,
the ``<TOOLCALL>`` tag, how the docs are shown). An entry's configuration is the default, or the
one named in a format-sensitivity id."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

ReturnFormat = Literal["python", "json", "verbose_xml", "concise_xml"]
_CONFIG_KEYS = ("ret_fmt", "tool_call_tag", "func_doc_fmt", "prompt_fmt", "style")


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
