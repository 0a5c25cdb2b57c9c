"""Safe execution of a model's call strings against an entry's own backend instances.

A call string (``cd(folder='docs')``) is data: it is parsed with :mod:`ast`, its function name
is looked up only among the public methods of the entry's backends, and its arguments are read
as literals (plus bounded literal arithmetic and nested calls to those same methods). Nothing is
ever passed to ``eval`` or ``exec``; a name that is not a tool (a builtin, a module, a private
or dunder member) is an error result, fed back to the model as a real API would answer.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_bfcl.backends.base import Backend, BackendServices, state_copy
from pytest_bfcl.backends.long_context import LongContext
from pytest_bfcl.backends.registry import backend_class
from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.limits import MAX_TEXT_CHARS, Budget, check_int
from pytest_bfcl.decode.python_calls import evaluate_literal_arithmetic
from pytest_bfcl.errors import ToolUnavailable

# Names the benchmark refuses before evaluating, whatever they resolve to.
DENIED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
MAX_NESTING = 32  # nested calls/containers in one argument
# Calls one environment executes. The most any entry makes in the reference corpora is 35;
# past this every call is answered with an error instead of running, so a stored result with
# endless steps cannot make an entry run for minutes (a call may scan a file of 200,000
# characters, and the messaging backend loops forever looking for a free id once 90,000
# messages exist). Deliberate deviation: the reference executes every call it is given.
MAX_EXECUTED_CALLS = 500
# The leaderboard's rewrite of a call string before it evaluates it: every name followed by
# "(" (spaces between them removed) and, when it is a tool, prefixed with the name of the
# instance that owns it. It runs over the whole string, text arguments included: a memory text
# "course (CS 101)" is stored as "course(CS 101)" (reference quirk, see :func:`rewritten_call`).
_CALLED_NAME = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")


class CallError(Exception):
    """A call that cannot be executed; its message is the error result."""


def instance_name(model: str, entry_id: str, class_name: str) -> str:
    """The variable name the leaderboard gives a backend instance during inference (its model
    name with ``/``, ``-`` and ``.`` as ``_``, the entry and the class)."""
    model = model.replace("/", "_").replace("-", "_").replace(".", "_")
    return re.sub(r"[-./:]", "_", f"{model}_{entry_id}_{class_name}_instance")


def rewritten_call(call: str, owners: dict[str, str]) -> str:
    """``call`` as the leaderboard rewrites it before evaluating it: ``owners`` maps each tool
    name to its instance's name. Reproduced because the rewritten texts are what the backends
    store and later show the model (memory snapshots in particular)."""

    def prefixed(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"{owners[name]}.{name}" if name in owners else name

    return _CALLED_NAME.sub(prefixed, call)


@dataclass
class Environment:
    """The backend instances of one entry in one run (inference, model evaluation or ground
    truth). Instances persist across the entry's turns and steps and are never shared."""

    instances: dict[str, Backend]
    _owners: dict[str, Backend] = field(default_factory=dict, repr=False)
    # Sequences built by arithmetic in arguments, over all the environment's calls: the
    # benchmark's calls never repeat anything, and a per-call budget would let many small
    # calls (``echo(content='x' * 10**5)``) grow the state without bound.
    _budget: Budget = field(default_factory=Budget, repr=False)
    _executed: int = field(default=0, repr=False)
    # tool name -> its instance's name, when calls are rewritten as the leaderboard rewrites
    # them (the conversation's environments by default; see ``rewritten_call``)
    _instance_of: dict[str, str] | None = field(default=None, repr=False)

    @classmethod
    def create(
        cls,
        involved_classes: list[str],
        initial_config: dict[str, Any] | None,
        long_context: LongContext | None = None,
        services: BackendServices | None = None,
        rewrite_for: tuple[str, str] | None = None,
    ) -> Environment:
        """Instances of the entry's classes, loaded from its scenario. ``services`` carries
        what the agentic backends need from the run (its ``long_context`` is replaced by the
        one given here). ``rewrite_for``: (model name, entry id) when calls are rewritten as
        the leaderboard's inference rewrites them."""
        services = replace(services or BackendServices(), long_context=long_context)
        instances: dict[str, Backend] = {}
        for name in involved_classes:
            instance = backend_class(name)()
            instance._services = services
            if not instance.STATELESS:
                config = state_copy((initial_config or {}).get(name, {}))
                instance._load_scenario(config, long_context)
            instances[name] = instance
        env = cls(instances)
        for instance in instances.values():  # a later class wins a name clash, as upstream
            for method in type(instance).public_methods():
                env._owners[method] = instance
        if rewrite_for is not None:
            model, entry_id = rewrite_for
            names = {id(i): instance_name(model, entry_id, c) for c, i in instances.items()}
            env._instance_of = {m: names[id(i)] for m, i in env._owners.items()}
        return env

    def execute(self, calls: list[str]) -> list[str]:
        """Run the calls in order; one result string per call."""
        return [self.execute_one(call) for call in calls]

    def execute_one(self, call: str) -> str:
        if self._instance_of is not None and len(call) <= MAX_TEXT_CHARS:
            # (a longer call is refused unparsed below: the rewrite of megabytes is not spent)
            call = rewritten_call(call, self._instance_of)
        name = call.split("(", 1)[0]
        if "." in name:
            name = name.split(".")[1]
        if name in DENIED_NAMES:
            return f"Error during execution: Function call {name} is not allowed."
        if self._executed >= MAX_EXECUTED_CALLS:
            return f"Error during execution: more than {MAX_EXECUTED_CALLS:,} calls in one entry"
        self._executed += 1
        try:
            return render_result(self._run(call))
        except ToolUnavailable:
            raise  # the run's fault (no recording, no embedding model), not the model's
        except Exception as exc:  # a CallError, or a backend method failing on odd input
            return f"Error during execution: {exc}"

    # -- evaluation -----------------------------------------------------------------------------

    def _run(self, call: str) -> Any:
        if len(call) > MAX_TEXT_CHARS:
            raise CallError(f"the call is longer than {MAX_TEXT_CHARS:,} characters")
        try:
            tree = ast.parse(call.strip(), filename="<string>", mode="eval")
        except SyntaxError as exc:
            raise CallError(f"{exc.msg} (<string>, line {exc.lineno})") from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise CallError(f"cannot parse the call: {type(exc).__name__}") from None
        return self._value(tree.body, 0)

    def _call(self, node: ast.Call, depth: int) -> Any:
        method = self._method(node.func)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise CallError("argument unpacking is not supported")
            args.append(self._value(arg, depth + 1))
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise CallError("argument unpacking is not supported")
            kwargs[keyword.arg] = self._value(keyword.value, depth + 1)
        return method(*args, **kwargs)

    def _method(self, func: ast.expr) -> Any:
        if isinstance(func, ast.Name):
            owner = self._owners.get(func.id)
            if owner is None:
                raise CallError(f"name '{func.id}' is not defined")
            # Only names from the owner class's public method set are ever looked up.
            return getattr(owner, func.id)
        if self._rewritten_tool(func):
            assert isinstance(func, ast.Attribute)
            return getattr(self._owners[func.attr], func.attr)
        root = func
        while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
            root = root.value if not isinstance(root, ast.Call) else root.func
        if isinstance(root, ast.Name):
            raise CallError(f"name '{root.id}' is not defined")
        raise CallError("only calls to the available functions can be executed")

    def _rewritten_tool(self, func: ast.expr) -> bool:
        """Whether ``func`` is a tool as the rewrite names it (``<instance>.<tool>``)."""
        return (
            self._instance_of is not None
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and self._instance_of.get(func.attr) == func.value.id
        )

    def _value(self, node: ast.expr, depth: int) -> Any:
        if depth > MAX_NESTING:
            raise CallError("argument nested too deeply")
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.Constant):
            if type(node.value) is int:
                self._bounded_int(node.value)
            return node.value
        if isinstance(node, ast.Name):
            raise CallError(f"name '{node.id}' is not defined")
        if isinstance(node, ast.List):
            return [self._value(e, depth + 1) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self._value(e, depth + 1) for e in node.elts)
        if isinstance(node, ast.Set):
            return set(self._value(e, depth + 1) for e in node.elts)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise CallError("dict unpacking is not supported")
            return {
                self._value(k, depth + 1): self._value(v, depth + 1)  # type: ignore[arg-type]
                for k, v in zip(node.keys, node.values, strict=True)
            }
        if isinstance(node, ast.UnaryOp | ast.BinOp):
            return self._arithmetic(node)
        raise CallError(f"unsupported expression in a call: {ast.unparse(node)[:80]}")

    @staticmethod
    def _bounded_int(value: int) -> None:
        try:
            check_int(value)
        except DecodeError as exc:
            raise CallError(str(exc)) from None

    def _arithmetic(self, node: ast.expr) -> Any:
        try:
            return evaluate_literal_arithmetic(node, self._budget)
        except DecodeError as exc:
            raise CallError(str(exc)) from None


def render_result(result: Any) -> str:
    """A method's return value as the text the model (and the checker) sees."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError, RecursionError):
            return str(result)  # e.g. an mpmath or Decimal value: ``{'result': mpf('2.0')}``
    return str(result)
