"""The oracle's answers in the executable categories: the ground-truth calls written as a model
would write them (tool calls, or prompting text), read back through the same decoders.

``exec_*`` ground truth is call strings (positional arguments are named after the function's
parameters, as a tool call names them); ``rest`` uses the call from the sanity-check file;
``sql`` is AST ground truth like any AST category.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from pytest_bfcl.backends.executable import ExecutableAPI
from pytest_bfcl.dataset.executable import ExecAnswer
from pytest_bfcl.dataset.models import AstAnswer
from pytest_bfcl.decode.python_calls import call_name, evaluate_literal_arithmetic
from pytest_bfcl.models.base import NotGenerated, Task
from pytest_bfcl.models.encode import fc_tool_calls, ground_truth_calls, prompting_text
from pytest_bfcl.scoring import ScoringOptions

_SQL_INSERT = (
    "data error: the ground truth's insert_values is a flat list, but the doc declares an array "
    "of arrays (one row per inner array), so its own value fails the type check"
)
# Entries whose ground truth fails, with the cause (the same in fc and prompt mode); to be
# listed in data/oracle_known_failures.json.
ORACLE_KNOWN_FAILURES: dict[str, str] = {
    "exec_parallel_31": (
        "data error: the third ground-truth call multiplies a 2x4 matrix by a 2x4 matrix, "
        "which is undefined, so the expected result cannot be computed"
    ),
    "sql_15": (
        "data error: the ground truth holds two sql.execute calls (the second with its table "
        "name nested in a list) for a single-call entry"
    ),
    **{f"sql_{n}": _SQL_INSERT for n in (18, 19, 28, 29, 38, 39, 49, 68, 69)},
}


def keyword_form(call: str) -> dict[str, dict[str, Any]]:
    """``f(1, b=2)`` as ``{"f": {"a": 1, "b": 2}}``; values are literals (nothing runs)."""
    node = ast.parse(call.strip(), mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"not a call: {call!r}")
    name = call_name(node)
    args = {k.arg: evaluate_literal_arithmetic(k.value) for k in node.keywords if k.arg}
    if node.args:
        for param, value in zip(_parameters(name), node.args, strict=False):
            args.setdefault(param, evaluate_literal_arithmetic(value))
    return {name: args}


def _parameters(name: str) -> list[str]:
    if name in ("requests.get", "requests_get"):
        return ["url"]
    if name not in ExecutableAPI.public_methods():
        raise ValueError(f"{name!r} is not an executable function")
    signature = inspect.signature(getattr(ExecutableAPI, name))
    return [p for p in signature.parameters if p != "self"]


def oracle_calls(task: Task) -> list[dict[str, Any]]:
    answer = task.answer
    if isinstance(answer, AstAnswer):
        return ground_truth_calls(answer.ground_truth)
    if isinstance(answer, ExecAnswer) and answer.calls:
        return [keyword_form(call) for call in answer.calls]
    raise NotGenerated(f"{task.entry.id} has no ground-truth call")


def executable_output(task: Task, scoring: ScoringOptions) -> Any:
    """The oracle's raw output for an executable entry, in the scoring mode's form."""
    calls = oracle_calls(task)
    entry = task.entry
    if scoring.mode == "fc":
        return fc_tool_calls(calls, entry.function, underscore_names=scoring.underscore_to_dot)
    return prompting_text(calls, entry.function, entry.prompt_format)
