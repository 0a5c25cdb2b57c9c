"""Render decoded calls as call strings (``f(a=1, b='x')``) for the multi-turn executor."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.decode.errors import DecodeError


def render_value(value: Any) -> str:
    """Render one argument value the way the reference's prompting decoder does."""
    if isinstance(value, dict):
        if all(isinstance(v, dict) for v in value.values()):
            # Quirk: a dict of dicts reads as a nested call; ``{}`` has no name and fails.
            if not value:
                raise DecodeError("an empty dict argument cannot be rendered as a call")
            name, args = next(iter(value.items()))
            inner = ", ".join(f"{k}={render_value(v)}" for k, v in args.items())
            return f"{name}({inner})"
        return "{" + ", ".join(f"'{k}': {render_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def render_calls(calls: list[dict[str, Any]]) -> list[str]:
    out = []
    for call in calls:
        for name, args in call.items():
            out.append(f"{name}({', '.join(f'{k}={render_value(v)}' for k, v in args.items())})")
    return out
