"""Decode Python call syntax (``[f(a=1), g.h(b="x")]``) by parsing it with :mod:`ast`.

The value rules follow the reference decoder, quirks included (each marked ``Quirk``), except
that nothing is ever evaluated: arithmetic in a binary operation is computed by a small, bounded
interpreter over literals instead of ``eval``. Every value is bounded (``decode.limits``): the
interpreter refuses a repetition before building it when its expanded size is too large.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Any

from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.limits import MAX_CALLS, Budget, check_calls, check_int, expanded_size

Call = dict[str, dict[Any, Any]]

# Bound on one string or list built by arithmetic (``"a" * 10**9``), counted expanded
# (``[[0] * 1000] * 1000`` is a million elements to render, though small in memory).
_MAX_SEQUENCE = 100_000
_MAX_POWER_BITS = 4_096  # bound on ``x ** y`` results
_FORMAT_NUMBER = re.compile(r"\d+")


def parse_python_calls(text: str) -> list[Call]:
    """Parse one Python expression that is a call or a list/tuple/set of calls."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
    body = tree.body
    budget = Budget()
    if isinstance(body, ast.Call):
        calls = [resolve_call(body, budget)]
    else:
        elements = getattr(body, "elts", None)
        if elements is None:
            raise DecodeError(f"expected a list of calls, got {type(body).__name__}")
        if len(elements) > MAX_CALLS:  # refused before any is read
            raise DecodeError(
                f"{len(elements):,} calls in one output; at most {MAX_CALLS:,} are read"
            )
        calls = []
        for element in elements:
            if not isinstance(element, ast.Call):
                raise DecodeError(f"expected a call, got {type(element).__name__}")
            calls.append(resolve_call(element, budget))
    check_calls(calls)
    return calls


def call_name(node: ast.Call) -> str:
    """The dotted name of a call: ``a.b.c(...)`` gives ``a.b.c``."""
    parts: list[str] = []
    func = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def resolve_call(node: ast.Call, budget: Budget | None = None) -> Call:
    # Quirk: positional arguments are dropped silently; only keywords are kept.
    budget = budget or Budget()
    return {call_name(node): {kw.arg: resolve_value(kw.value, budget) for kw in node.keywords}}


def resolve_value(node: ast.expr, budget: Budget | None = None) -> Any:
    """Turn an argument expression into a value, following the reference's table."""
    budget = budget or Budget()
    if isinstance(node, ast.Constant):
        if type(node.value) is int:
            check_int(node.value)  # ``0xfff...`` literals escape Python's digit limit
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        # Quirk: any unary operator negates its operand's constant value (``+1`` -> -1,
        # ``not True`` -> -1); a non-constant operand fails.
        if not isinstance(node.operand, ast.Constant):
            raise DecodeError("unary operator on a non-constant operand")
        operand: Any = node.operand.value  # any constant; a TypeError is the model's failure
        try:
            return -operand
        except TypeError as exc:
            raise DecodeError(str(exc)) from None
    if isinstance(node, ast.List):
        return [resolve_value(v, budget) for v in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(resolve_value(v, budget) for v in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise DecodeError("dict unpacking is not a value")
        pairs = [
            (resolve_value(k, budget), resolve_value(v, budget))  # type: ignore[arg-type]
            for k, v in zip(node.keys, node.values, strict=True)
        ]
        return _as_dict(pairs)
    if isinstance(node, ast.BinOp):
        return evaluate_literal_arithmetic(node, budget)
    if isinstance(node, ast.Name):
        return node.id  # Quirk: a bare name becomes its text (``true`` -> "true")
    if isinstance(node, ast.Call):
        return ast.unparse(node) if not node.keywords else resolve_call(node, budget)
    if isinstance(node, ast.Subscript):
        return f"{ast.unparse(node.value)}[{ast.unparse(node.slice)}]"
    raise DecodeError(f"Unsupported AST type: {type(node).__name__}")


_BINARY_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
}
_UNARY_OPS = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}


def evaluate_literal_arithmetic(node: ast.expr, budget: Budget | None = None) -> Any:
    """Compute ``1 + 2`` or ``"a" + "b"`` over literals only, like Python would, with bounds.

    The reference evaluates the expression's source; we interpret the literal subset instead, so
    names, calls and attributes fail rather than run. Sequences built by ``+`` and ``*`` are
    charged to ``budget`` (one per output) before they are built.
    """
    budget = budget or Budget()
    if isinstance(node, ast.Constant):
        if type(node.value) is int:
            check_int(node.value)
        return node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [evaluate_literal_arithmetic(e, budget) for e in node.elts]
        if isinstance(node, ast.List):
            return items
        return tuple(items) if isinstance(node, ast.Tuple) else _as_set(items)
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        pairs = [
            (evaluate_literal_arithmetic(k, budget), evaluate_literal_arithmetic(v, budget))  # type: ignore[arg-type]
            for k, v in zip(node.keys, node.values, strict=True)
        ]
        return _as_dict(pairs)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_OPS:
        operand = evaluate_literal_arithmetic(node.operand, budget)
        return _bounded(_apply(_UNARY_OPS[type(node.op)], operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY_OPS:
        left = evaluate_literal_arithmetic(node.left, budget)
        right = evaluate_literal_arithmetic(node.right, budget)
        _check_bounds(node.op, left, right, budget)
        return _bounded(_apply(_BINARY_OPS[type(node.op)], left, right))
    raise DecodeError(f"cannot compute {ast.unparse(node)!r}: only literal arithmetic is read")


def _as_set(items: list[Any]) -> set[Any]:
    try:
        return set(items)
    except TypeError as exc:
        raise DecodeError(str(exc)) from None


def _as_dict(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    try:
        return dict(pairs)
    except TypeError as exc:  # an unhashable key (``{[1]: 2}``)
        raise DecodeError(f"TypeError: {exc}") from None


def _apply(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def _bounded(value: Any) -> Any:
    if type(value) is int:
        check_int(value)  # products of large literals
    return value


def _check_bounds(op: ast.operator, left: Any, right: Any, budget: Budget) -> None:
    # Only integer powers can be costly: a float on either side (``1e999 ** 2``, ``2 ** 1e999``)
    # is float arithmetic, computed at once to infinity or an OverflowError, as the reference's
    # eval computes it.
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
        magnitude = abs(left)
        if magnitude > 1 and abs(right) * max(magnitude.bit_length(), 1) > _MAX_POWER_BITS:
            raise DecodeError("power too large to compute")
    if isinstance(op, ast.LShift) and isinstance(right, int) and right > _MAX_POWER_BITS:
        raise DecodeError("shift too large to compute")
    if isinstance(op, ast.Mult):
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, str | bytes | list | tuple) and isinstance(count, int):
                # Counted as a renderer sees it, before anything is built.
                size = max(count, 0) * _element_count(seq)
                if size > _MAX_SEQUENCE:
                    raise DecodeError(
                        f"repeated sequence too long ({size:,} elements when expanded; "
                        f"at most {_MAX_SEQUENCE:,})"
                    )
                budget.spend(size)
    if isinstance(op, ast.Add) and isinstance(left, str | bytes | list | tuple):
        budget.spend(expanded_size(left) + expanded_size(right))
    if isinstance(op, ast.Mod) and isinstance(left, str | bytes):
        _check_format(left)


def _element_count(seq: str | bytes | list[Any] | tuple[Any, ...]) -> int:
    """Characters of a string; elements of a list, nested ones counted one by one."""
    return len(seq) if isinstance(seq, str | bytes) else expanded_size(seq) - 1


def _check_format(template: str | bytes) -> None:
    """``"%0999999999d" % 1`` allocates a gigabyte: the widths and precisions of a ``%``
    template must add up to a bounded length, and ``*`` (a width taken from the arguments)
    is refused."""
    text = template.decode("latin-1") if isinstance(template, bytes) else template
    if "*" in text:
        raise DecodeError("a '%' template with '*' widths is not computed")
    numbers = _FORMAT_NUMBER.findall(text)
    if any(len(n) > 6 for n in numbers) or sum(map(int, numbers)) > _MAX_SEQUENCE:
        raise DecodeError("a '%' template with widths too large to compute")
