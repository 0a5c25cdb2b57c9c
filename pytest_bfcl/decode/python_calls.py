"""Decode Python call syntax (``[f(a=1), g.h(b="x")]``) by parsing it with :mod:`ast`.

The value rules follow the reference decoder, quirks included (each marked ``Quirk``), except
that nothing is ever evaluated: arithmetic in a binary operation is computed by a small, bounded
interpreter over literals instead of ``eval``.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from pytest_bfcl.decode.errors import DecodeError

Call = dict[str, dict[Any, Any]]

_MAX_SEQUENCE = 100_000  # bound on strings/lists built by arithmetic (``"a" * 10**9``)
_MAX_POWER_BITS = 4_096  # bound on ``x ** y`` results


def parse_python_calls(text: str) -> list[Call]:
    """Parse one Python expression that is a call or a list/tuple/set of calls."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
    body = tree.body
    if isinstance(body, ast.Call):
        return [resolve_call(body)]
    elements = getattr(body, "elts", None)
    if elements is None:
        raise DecodeError(f"expected a list of calls, got {type(body).__name__}")
    calls = []
    for element in elements:
        if not isinstance(element, ast.Call):
            raise DecodeError(f"expected a call, got {type(element).__name__}")
        calls.append(resolve_call(element))
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


def resolve_call(node: ast.Call) -> Call:
    # Quirk: positional arguments are dropped silently; only keywords are kept.
    return {call_name(node): {kw.arg: resolve_value(kw.value) for kw in node.keywords}}


def resolve_value(node: ast.expr) -> Any:
    """Turn an argument expression into a value, following the reference's table."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        # Quirk: any unary operator negates its operand's constant value (``+1`` -> -1,
        # ``not True`` -> -1); a non-constant operand fails.
        if not isinstance(node.operand, ast.Constant):
            raise DecodeError("unary operator on a non-constant operand")
        try:
            return -node.operand.value
        except TypeError as exc:
            raise DecodeError(str(exc)) from None
    if isinstance(node, ast.List):
        return [resolve_value(v) for v in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(resolve_value(v) for v in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise DecodeError("dict unpacking is not a value")
        return {
            resolve_value(k): resolve_value(v)  # type: ignore[arg-type]
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.BinOp):
        return evaluate_literal_arithmetic(node)
    if isinstance(node, ast.Name):
        return node.id  # Quirk: a bare name becomes its text (``true`` -> "true")
    if isinstance(node, ast.Call):
        return ast.unparse(node) if not node.keywords else resolve_call(node)
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


def evaluate_literal_arithmetic(node: ast.expr) -> Any:
    """Compute ``1 + 2`` or ``"a" + "b"`` over literals only, like Python would, with bounds.

    The reference evaluates the expression's source; we interpret the literal subset instead, so
    names, calls and attributes fail rather than run.
    """
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [evaluate_literal_arithmetic(e) for e in node.elts]
        if isinstance(node, ast.List):
            return items
        return tuple(items) if isinstance(node, ast.Tuple) else _as_set(items)
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {
            evaluate_literal_arithmetic(k): evaluate_literal_arithmetic(v)  # type: ignore[arg-type]
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_OPS:
        return _apply(_UNARY_OPS[type(node.op)], evaluate_literal_arithmetic(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY_OPS:
        left = evaluate_literal_arithmetic(node.left)
        right = evaluate_literal_arithmetic(node.right)
        _check_bounds(node.op, left, right)
        return _apply(_BINARY_OPS[type(node.op)], left, right)
    raise DecodeError(f"cannot compute {ast.unparse(node)!r}: only literal arithmetic is read")


def _as_set(items: list[Any]) -> set[Any]:
    try:
        return set(items)
    except TypeError as exc:
        raise DecodeError(str(exc)) from None


def _apply(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def _check_bounds(op: ast.operator, left: Any, right: Any) -> None:
    if isinstance(op, ast.Pow) and isinstance(left, int | float) and isinstance(right, int | float):
        magnitude = abs(left) if left else 0
        if magnitude > 1 and abs(right) * max(int(magnitude).bit_length(), 1) > _MAX_POWER_BITS:
            raise DecodeError("power too large to compute")
    if isinstance(op, ast.LShift) and isinstance(right, int) and right > _MAX_POWER_BITS:
        raise DecodeError("shift too large to compute")
    if isinstance(op, ast.Mult):
        for seq, count in ((left, right), (right, left)):
            repeated = isinstance(seq, str | bytes | list | tuple) and isinstance(count, int)
            if repeated and len(seq) * count > _MAX_SEQUENCE:
                raise DecodeError("repeated sequence too long")
