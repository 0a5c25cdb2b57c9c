"""A model's call is data: nothing it sends can run code, reach private state, or stop the
session. Each case would execute under an ``eval``-based executor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.check.multi_turn import MultiTurnOptions, evaluate_multi_turn
from pytest_bfcl.dataset.models import Entry, MultiTurnAnswer


@pytest.fixture
def env() -> Environment:
    return Environment.create(["GorillaFileSystem", "MathAPI"], {})


def _marker(tmp_path: Path) -> Path:
    return tmp_path / "pwned"


def attacks(marker: Path) -> list[str]:
    touch = f"open({str(marker)!r}, 'w').write('x')"
    system = f"__import__('os').system('touch {marker}')"
    return [
        # code in the name
        f"{system}",
        f"__import__('os').system('touch {marker}')#(",
        f"(lambda: {touch})()",
        f"[{touch} for _ in [1]]",
        f"exec({touch!r})",
        f"eval({touch!r})",
        "compile('1', 'x', 'exec')",
        f"getattr(__builtins__, 'exec')({touch!r})",
        # the reference's method binding turns ``x.ls(`` into a bound call; names after dots
        f"os.system('touch {marker}')",
        f"ls.__globals__['os'].system('touch {marker}')",
        "ls.__func__.__globals__",
        # private and dunder members of the backend
        "_navigate('/')",
        "_load_scenario({}, None)",
        "__init__()",
        "__class__()",
        "_state()",
        "public_methods()",
        # code in arguments and nested values
        f"cd(folder={system})",
        f"echo(content={touch}, file_name=None)",
        f"cd(folder=[{system}][0])",
        f"mean(numbers=[1, {system}])",
        f"echo(content={{'k': {system}}})",
        "cd(folder=ls.__class__)",
        "cd(folder=(lambda: 'x')())",
        f"cd(**{{'folder': {system}}})",
        f"cd(*[{system}])",
        # builtins and modules that eval would find
        "len('abc')",
        "print('hi')",
        "open('/etc/passwd')",
        "globals()",
        "__builtins__",
        "breakpoint()",
        # denied names, even when they would resolve
        "exit()",
        "quit()",
        "kill()",
        "remove('x')",
        "run('ls')",
        # resource exhaustion through arithmetic
        "add(a=10**10**10, b=1)",
        "echo(content='x'*10**10)",
        # syntax that is not a call at all
        "ls(",
        "",
        "1; import os",
    ]


def test_no_attack_runs_and_each_gets_an_error_result(env, tmp_path):
    marker = _marker(tmp_path)
    for call in attacks(marker):
        [result] = env.execute([call])
        assert result.startswith("Error during execution:"), (call, result)
    assert not marker.exists()
    assert env.execute(["power(base=9, exponent=10**9)"]) == [
        '{"error": "Result too large to compute"}'
    ]
    # the session and the backend survive and keep working
    assert env.execute(["pwd()"]) == ['{"current_working_directory": "//"}']


def test_name_injection_that_the_reference_executes(env, tmp_path):
    """The reference binds every ``name(`` to a method by regex and then evaluates the whole
    string, so a tool name carrying code runs. Here it is an unknown name."""
    marker = _marker(tmp_path)
    call = f"ls(a=True) or __import__('os').system('touch {marker}')"
    assert env.execute([call])[0].startswith("Error during execution:")
    fc_name = f"__import__('os').system('touch {marker}') or ls"
    assert env.execute([f"{fc_name}(a=True)"])[0].startswith("Error during execution:")
    assert not marker.exists()


def test_string_arguments_are_never_rewritten_or_run(env):
    # The reference's regex rewrites ``pwd(`` inside strings; here text stays text.
    assert env.execute(["echo(content='run pwd() and os.system(1) now')"]) == [
        '{"terminal_output": "run pwd() and os.system(1) now"}'
    ]


def test_nested_calls_may_only_reach_the_entry_tools(env):
    assert env.execute(["echo(content=pwd())"]) == [
        '{"terminal_output": {"current_working_directory": "//"}}'
    ]
    assert env.execute(["echo(content=getattr(ls, '__globals__'))"])[0].startswith(
        "Error during execution: name 'getattr' is not defined"
    )


def test_instances_are_never_shared_between_environments():
    first = Environment.create(["GorillaFileSystem"], {})
    second = Environment.create(["GorillaFileSystem"], {})
    first.execute(["mkdir('only_here')"])
    assert second.execute(["ls()"]) == ['{"current_directory_content": []}']


def test_hostile_model_output_through_the_checker(tmp_path):
    """Tool calls with hostile names and arguments, scored end to end: the entry fails, the
    session goes on, nothing runs."""
    marker = _marker(tmp_path)
    entry = Entry(
        id="multi_turn_base_9999",
        question=[[{"role": "user", "content": "list"}]],
        involved_classes=["GorillaFileSystem"],
        initial_config={},
    )
    answer = MultiTurnAnswer(id=entry.id, ground_truth=[["mkdir(dir_name='x')"]])
    hostile = [
        [
            [
                {f"__import__('os').system('touch {marker}')": "{}"},
                {"ls": f'{{"a": "{marker}"}}'},
                {"_navigate": '{"path": "/"}'},
            ]
        ]
    ]
    verdict = evaluate_multi_turn(entry, answer, hostile, MultiTurnOptions("fc"))
    assert not verdict.valid
    assert verdict.error_type == "multi_turn:instance_state_mismatch"
    assert not marker.exists()
    assert os.getcwd()  # still alive
