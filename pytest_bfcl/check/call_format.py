"""Shape predicates on decoded output shared by the AST and relevance checkers."""

from __future__ import annotations

from typing import Any


def is_call_list(decoded: Any) -> bool:
    """``[{name: {param: value}}, ...]`` with one key per item; ``[]`` qualifies."""
    if type(decoded) is not list:
        return False
    for item in decoded:
        if type(item) is not dict or len(item) != 1:
            return False
        if type(next(iter(item.values()))) is not dict:
            return False
    return True


def is_empty_output(decoded: Any) -> bool:
    """No call at all: not a call list, ``[]`` or ``[{}]`` (used by relevance detection)."""
    if not is_call_list(decoded):
        return True
    return len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0)
