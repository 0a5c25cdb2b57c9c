"""Decoders: turn a model's raw output into calls ``[{name: {param: value}}]``.

Model output is data: every decoder parses (``ast.parse``, ``json.loads``, an XML parser or a
tree-sitter grammar) and never evaluates or executes what the model wrote.
"""

from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.fc import decode_fc_ast, decode_fc_execute
from pytest_bfcl.decode.prompting import (
    PromptFormat,
    decode_prompting_ast,
    decode_prompting_execute,
)

__all__ = [
    "DecodeError",
    "PromptFormat",
    "decode_fc_ast",
    "decode_fc_execute",
    "decode_prompting_ast",
    "decode_prompting_execute",
]
