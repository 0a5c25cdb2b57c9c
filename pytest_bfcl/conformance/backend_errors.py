"""The simulated backends' answers to badly formed calls, compared with the official ones.

A model's call may name an argument the function lacks, leave out a required one, or pass a
value of the wrong type; the backend's error text is fed back to the model, so it must read as
the leaderboard's does. Every public function of every multi-turn backend and of the kv and
rec_sum memories is called with no arguments, with an unknown argument, and with each
parameter in turn given values of other types (the rest given a value of their own type); the
benchmark's own calls are varied the same way on their entries' scenarios. Each call runs on a
fresh instance. The same calls run through the official executor in the evaluator's
virtualenv (:mod:`pytest_bfcl.conformance.reference`), and the answers are compared as text.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
import tempfile
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.backends.registry import backend_class
from pytest_bfcl.conformance.reference import evaluator_env

# The backends of the multi-turn categories (the memory and web-search ones need models and
# services of their own to start in the reference).
MULTI_TURN_CLASSES = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
)
UNKNOWN_ARGUMENT = "unknown_argument"
# A value of each JSON type a model can send, written as the call string carries it.
WRONG_VALUES: dict[str, str] = {
    "int": "7",
    "float": "2.5",
    "bool": "True",
    "str": "'zz'",
    "list": "[1, 'x']",
    "dict": "{'k': 1}",
    "None": "None",
}
# The value given to the parameters not under test, by their annotated type.
GOOD_VALUES: dict[type, str] = {
    str: "'a'",
    int: "1",
    float: "1.0",
    bool: "False",
    list: "['a']",
    dict: "{}",
}

# Run by the evaluator's Python: reads the cases from stdin, runs each through the official
# executor on a fresh instance (a unique entry id), writes the answers as JSON to stdout.
REFERENCE_RUNNER = """
import json, sys
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call
from pathlib import Path
cases = json.load(sys.stdin)
out = []
for i, case in enumerate(cases):
    config = case["reference_config"] or case["config"]
    for scenario in config.values():
        if "model_result_dir" in scenario:
            scenario["model_result_dir"] = Path(f"memory_{i}")
    results, _ = execute_multi_turn_func_call(
        case["setup"] + [case["call"]], config, [case["backend"]], "probe", f"case_{i}"
    )
    out.append(results[-1])
json.dump(out, sys.stdout)
"""


OUR_RUNNER = """
import json, sys
from pytest_bfcl.conformance.backend_errors import Case, our_answers
json.dump(our_answers([Case(**c) for c in json.load(sys.stdin)]), sys.stdout)
"""
HASH_SEED = "0"


class Case(BaseModel):
    """One call on a fresh instance of one backend loaded with ``config``, after ``setup``."""

    backend: str
    config: dict[str, Any]
    call: str
    setup: list[str] = []
    # the scenario in the reference's form where it differs (the memory backends')
    reference_config: dict[str, Any] | None = None


class Difference(BaseModel):
    case: Case
    ours: str
    reference: str


def _plain_type(annotation: Any) -> type | None:
    """The first plain type an annotation allows (``str | None`` -> str, ``list[str]`` ->
    list)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        kinds = [_plain_type(a) for a in typing.get_args(annotation) if a is not type(None)]
        return next((k for k in kinds if k is not None), None)
    if isinstance(origin, type):
        return origin
    return annotation if isinstance(annotation, type) else None


def _parameters(backend: str, method: str) -> list[tuple[str, type | None, bool]]:
    """(name, annotated type, required) of a backend function's parameters."""
    function = getattr(backend_class(backend), method)
    hints = typing.get_type_hints(function)
    return [
        (p.name, _plain_type(hints.get(p.name)), p.default is inspect.Parameter.empty)
        for p in list(inspect.signature(function).parameters.values())[1:]
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]


def _good(kind: type | None) -> str:
    return GOOD_VALUES.get(kind, "'a'") if kind is not None else "'a'"


def _wrong_values(kind: type | None) -> Iterable[str]:
    """Values of every type but the annotated one (an int passes for a float, as in JSON)."""
    same = {kind.__name__} if kind is not None else set()
    if kind is float:
        same.add("int")
    return [value for name, value in WRONG_VALUES.items() if name not in same]


def method_calls(backend: str, method: str) -> list[str]:
    """The badly formed calls of one backend function."""
    params = _parameters(backend, method)
    required = {name: _good(kind) for name, kind, needed in params if needed}
    calls = [f"{method}()"] if required else []
    filled = ", ".join(f"{k}={v}" for k, v in required.items())
    calls.append(f"{method}({filled}{', ' if filled else ''}{UNKNOWN_ARGUMENT}=1)")
    for name, kind, _ in params:
        for value in _wrong_values(kind):
            args = {**required, name: value}
            calls.append(f"{method}({', '.join(f'{k}={v}' for k, v in args.items())})")
    return calls


def probe_cases(configs: dict[str, dict[str, Any]]) -> list[Case]:
    """Every badly formed call of every function of the backends ``configs`` names, with the
    scenario each is loaded with."""
    cases: list[Case] = []
    for backend, config in configs.items():
        for method in sorted(backend_class(backend).public_methods()):
            cases.extend(
                Case(backend=backend, config=config, call=call)
                for call in method_calls(backend, method)
            )
    return cases


def ground_truth_cases(
    entries: Iterable[Any], answers: dict[str, Any], per_method: int = 3
) -> list[Case]:
    """Badly formed variants of the benchmark's own calls, each on the scenario of the entry
    it comes from: every argument in turn given values of other types, every argument left
    out, and an unknown one added. These reach the code behind a valid first argument (a file
    that exists, a booked flight), which made-up arguments do not."""
    seen: dict[tuple[str, str], int] = {}
    cases: list[Case] = []
    for entry in entries:
        answer = answers.get(entry.id)
        owners = {
            method: backend
            for backend in entry.involved_classes
            if backend in MULTI_TURN_CLASSES
            for method in backend_class(backend).public_methods()
        }
        for call in (c for turn in getattr(answer, "ground_truth", []) for c in turn):
            parsed = _keyword_call(call)
            if parsed is None or parsed[0] not in owners:
                continue
            method, arguments = parsed
            backend = owners[method]
            if seen.get((backend, method), 0) >= per_method:
                continue
            seen[(backend, method)] = seen.get((backend, method), 0) + 1
            config = {backend: entry.initial_config.get(backend, {})}
            cases.extend(
                Case(backend=backend, config=config, call=variant)
                for variant in _variants(backend, method, arguments)
            )
    return cases


def _keyword_call(call: str) -> tuple[str, dict[str, str]] | None:
    """A call of keyword arguments as (name, {argument: its source}); None for any other."""
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    arguments = {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg is not None}
    return node.func.id, arguments


def _variants(backend: str, method: str, arguments: dict[str, str]) -> list[str]:
    def written(args: dict[str, str]) -> str:
        return f"{method}({', '.join(f'{k}={v}' for k, v in args.items())})"

    kinds = {name: kind for name, kind, _ in _parameters(backend, method)}
    out = [written({**arguments, UNKNOWN_ARGUMENT: "1"})]
    for name in arguments:
        out.append(written({k: v for k, v in arguments.items() if k != name}))
        out.extend(written({**arguments, name: value}) for value in _wrong_values(kinds.get(name)))
    return out


# The memory backends that start without services (the vector one needs its embedding model),
# each empty as a scenario's first conversation, then given a few entries.
MEMORY_PROBES: dict[str, tuple[str, list[str]]] = {
    "MemoryAPI_kv": (
        "memory_kv_prereq_0-customer-0",
        [
            "core_memory_add(key='user_name', value='Ann Lee')",
            "archival_memory_add(key='trip_plan', value='Rome in May')",
        ],
    ),
    "MemoryAPI_rec_sum": (
        "memory_rec_sum_prereq_0-customer-0",
        ["memory_append(text='Likes tea')"],
    ),
}


def memory_cases() -> list[Case]:
    """Every badly formed call of every memory function (kv and rec_sum), on an empty memory
    and on one holding a few entries."""
    cases: list[Case] = []
    for backend, (test_id, filled) in MEMORY_PROBES.items():
        scenario = {"model_result_dir": "", "test_id": test_id, "scenario": "customer"}
        for method in sorted(backend_class(backend).public_methods()):
            for call in method_calls(backend, method):
                cases.extend(
                    Case(
                        backend=backend,
                        config={backend: {"snapshot": None}},
                        call=call,
                        setup=setup,
                        reference_config={backend: scenario},
                    )
                    for setup in ([], filled)
                )
    return cases


def scenario_configs(entries: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per multi-turn backend, the scenario of the first entry that involves it (the
    calculator has none)."""
    configs: dict[str, dict[str, Any]] = {}
    for entry in entries:
        for backend in entry.involved_classes:
            if backend in MULTI_TURN_CLASSES and backend not in configs:
                configs[backend] = {backend: entry.initial_config.get(backend, {})}
    return {b: configs.get(b, {}) for b in MULTI_TURN_CLASSES}


def our_answers(cases: list[Case]) -> list[str]:
    """Each call's answer from pytest-bfcl's backends, each on a fresh instance."""
    answers = []
    for case in cases:
        env = Environment.create([case.backend], case.config)
        env.execute(case.setup)
        answers.append(env.execute_one(case.call))
    return answers


def reference_answers(python: Path, cases: list[Case], timeout: float = 600) -> list[str]:
    """Each call's answer from the official executor, run by the evaluator's Python."""
    with tempfile.TemporaryDirectory(prefix="bfcl-backend-errors-") as tmp:
        env = {**evaluator_env(Path(tmp)), "PYTHONHASHSEED": HASH_SEED}
        return _answers_from([str(python), "-c", REFERENCE_RUNNER], cases, env, tmp, timeout)


def our_answers_pinned(cases: list[Case], timeout: float = 600) -> list[str]:
    """:func:`our_answers` in a process of this Python with the hash seed the reference's run
    has: a set printed in an answer (the flight classes) prints in the same order."""
    env = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
    return _answers_from([sys.executable, "-c", OUR_RUNNER], cases, env, None, timeout)


def _answers_from(
    command: list[str], cases: list[Case], env: dict[str, str], cwd: str | None, timeout: float
) -> list[str]:
    payload = json.dumps([case.model_dump() for case in cases])
    done = subprocess.run(
        command, input=payload, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd
    )
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed to run the calls:\n{done.stderr[-3000:]}")
    answers = json.loads(done.stdout)
    if not isinstance(answers, list) or len(answers) != len(cases):
        raise RuntimeError(f"{command[0]} answered a different number of calls")
    return [str(a) for a in answers]


def differences(cases: list[Case], ours: list[str], reference: list[str]) -> list[Difference]:
    return [
        Difference(case=case, ours=mine, reference=theirs)
        for case, mine, theirs in zip(cases, ours, reference, strict=True)
        if mine != theirs
    ]
