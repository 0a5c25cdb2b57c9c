"""Decoding native tool calls (function-calling mode).

A stored FC result is either a list of ``{name: arguments_json}`` (one per tool call, in API
order) or the assistant's text when it made no call.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.limits import (
    MAX_CALLS,
    check_json_value,
    check_text_length,
    check_value,
)
from pytest_bfcl.decode.limits import short_repr as _short


def _arguments(name: str, raw: Any) -> Any:
    if not isinstance(raw, str):
        raise DecodeError(f"tool call {name!r} arguments are not a JSON string: {_short(raw, 80)}")
    check_text_length(raw, f"the arguments of tool call {name!r}")
    try:
        args = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DecodeError(f"tool call {name!r} has arguments that are not JSON: {exc}") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise DecodeError(f"tool call {name!r} has unreadable arguments: {exc}") from None
    check_json_value(args, raw)
    return args


def _first_call(item: Any) -> tuple[str, Any]:
    # Like the reference, only the first key of each stored tool call is read.
    if not isinstance(item, dict) or not item:
        raise DecodeError(
            f"expected one {{name: arguments}} per tool call, got {_short(item, 120)}"
        )
    name, raw = next(iter(item.items()))
    return _name(name), raw


def _name(name: Any) -> str:
    if not isinstance(name, str):
        raise DecodeError(f"a tool call's name is not a string: {_short(name, 80)}")
    check_text_length(name, "a tool call's name")
    return name


def _call_count(result: list[Any]) -> None:
    if len(result) > MAX_CALLS:
        raise DecodeError(f"{len(result):,} tool calls; at most {MAX_CALLS:,} are read")


def decode_fc_ast(result: Any) -> list[dict[str, Any]]:
    """Tool calls -> ``[{name: args}]``. A text answer is not a call list and fails, except the
    empty string, which reads as no calls."""
    if isinstance(result, str):
        if result == "":
            return []
        raise DecodeError("the model answered with text instead of tool calls")
    if not isinstance(result, list):
        raise DecodeError(f"expected a list of tool calls, got {type(result).__name__}")
    _call_count(result)
    calls = []
    for item in result:
        name, raw = _first_call(item)
        calls.append({name: _arguments(name, raw)})
    return calls


def decode_fc_execute(result: Any) -> list[str]:
    """Tool calls -> call strings ``name(k=repr(v),k2=repr(v2))`` (no spaces, like the
    reference)."""
    if isinstance(result, dict):
        result = [result]
    if isinstance(result, str):
        if result == "":
            return []
        raise DecodeError("the model answered with text instead of tool calls")
    if not isinstance(result, list):
        raise DecodeError(f"expected a list of tool calls, got {type(result).__name__}")
    _call_count(result)
    out = []
    for item in result:
        if not isinstance(item, dict):
            raise DecodeError(
                f"expected {{name: arguments}} per tool call, got {_short(item, 120)}"
            )
        for name, raw in item.items():
            name = _name(name)
            if isinstance(raw, dict):
                check_value(raw)  # arguments stored as an object rather than JSON text
                args = raw
            else:
                args = _arguments(name, raw)
            if not isinstance(args, dict):
                raise DecodeError(
                    f"tool call {name!r} arguments are not an object: {_short(args, 80)}"
                )
            out.append(f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})")
    _call_count(out)
    return out
