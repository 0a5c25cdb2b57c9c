"""Running calls against one application in the backend tests."""

from __future__ import annotations

import ast
import json
from typing import Any

from pytest_bfcl.backends.execute import Environment


def run(env: Environment, *calls: str) -> list[Any]:
    """Execute calls; results that are JSON or Python literals (lists, None) are parsed for easy
    comparison, other text is kept."""
    out = []
    for text in env.execute(list(calls)):
        try:
            out.append(json.loads(text))
        except ValueError:
            try:
                out.append(ast.literal_eval(text))
            except (ValueError, SyntaxError):
                out.append(text)
    return out


def env_for(name: str, config: dict[str, Any] | None = None, long_context=None) -> Environment:
    return Environment.create([name], {name: config or {}}, long_context)
