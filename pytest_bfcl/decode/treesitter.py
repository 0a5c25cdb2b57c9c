"""Java and JavaScript call parsing for prompting mode, on tree-sitter grammars.

The grammar versions are pinned to the ones the reference uses so that what counts as a syntax
error is the same. Values come back as source text; the checker converts them by type.
"""

from __future__ import annotations

import warnings
from functools import cache
from types import ModuleType
from typing import Any

from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.limits import MAX_DEPTH

# Syntax-tree depth read from a Java or JavaScript answer. Tree-sitter parses any depth, but
# printing the tree (how the reference looks for errors) recurses in C and crashes the process
# at about 20,000 levels, and the value readers below recurse in Python.
MAX_TREE_DEPTH = 4 * MAX_DEPTH  # a value level is a few syntax nodes (array, list, element)


@cache
def _parser(language: str) -> Any:
    grammar: ModuleType
    try:
        from tree_sitter import Language, Parser

        if language == "java":
            import tree_sitter_java as grammar
        else:
            import tree_sitter_javascript as grammar
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise DecodeError(f"tree-sitter grammar for {language} is not installed: {exc}") from None
    with warnings.catch_warnings():
        # the pinned grammars hand out an int, which tree-sitter 0.22-0.25 accept with a
        # warning (pyproject keeps it below 0.26, which deprecates that outright)
        warnings.simplefilter("ignore", DeprecationWarning)
        lang = Language(grammar.language())
    return Parser(lang)


def _tree(source: str, language: str) -> tuple[Any, bytes]:
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate
        raise DecodeError(f"the {language} source is not valid Unicode: {exc}") from None
    root = _parser(language).parse(data).root_node
    # The reference tests ``"ERROR" in str(root)``: an ERROR node anywhere in the tree (MISSING
    # nodes do not count). The same question, answered by an iterative walk.
    if _has_error_node(root):
        raise DecodeError(f"Error parsing the {language} source code.")
    return root, data


def _has_error_node(root: Any) -> bool:
    """Walk the whole tree without recursion; refuse it when it is too deep to read."""
    cursor = root.walk()
    depth = 0
    while True:
        node = cursor.node
        if node.type == "ERROR":
            return True
        if depth >= MAX_TREE_DEPTH and node.child_count:
            raise DecodeError(f"the source is nested more than {MAX_TREE_DEPTH} levels deep")
        if cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return False
            depth -= 1


def _text(node: Any, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8")


def _single_valued(args: dict[Any, list[str]]) -> dict[Any, str]:
    for name, values in args.items():
        if len(values) > 1:
            raise DecodeError(
                f"argument {name!r} given {len(values)} times: "
                "multiple arguments with the same name are not supported"
            )
    return {name: values[0] for name, values in args.items()}


# -- Java -------------------------------------------------------------------------------------


def _java_value(node: Any, data: bytes, nested: bool = False) -> str:
    kind = node.type
    if kind in ("string_literal", "character_literal"):
        text = _text(node, data)
        return text if nested else text[1:-1]
    if kind in ("identifier", "class_literal", "type_identifier", "method_invocation"):
        return _text(node, data)
    if kind == "array_creation_expression":
        type_text = _java_value(node.child_by_field_name("type"), data, True)
        value = node.child_by_field_name("value")
        value_text = _java_value(value, data, True) if value is not None else "None"
        return f"new {type_text}[]{value_text}"
    if kind == "object_creation_expression":
        # Quirk: an anonymous class body (``new HashMap<..>() {{ put(..); }}``) is dropped.
        type_text = _java_value(node.child_by_field_name("type"), data, True)
        args = node.child_by_field_name("arguments")
        if args is None:
            return f"new {type_text}()"
        parts = [_java_value(c, data, True) for c in args.children if c.type not in (",", "(", ")")]
        return f"new {type_text}({', '.join(parts)})"
    if node.child_count:
        return "".join(_java_value(c, data, True) for c in node.children)
    return _text(node, data)


def _find_java_invocation(node: Any) -> Any:
    if node.type == "method_invocation":
        return node
    for child in node.children:
        found = _find_java_invocation(child)
        if found is not None:
            return found
    return None


def parse_java_calls(source: str) -> list[dict[str, Any]] | None:
    """Parse ``Class.method(a=1, b="x")``; only the first invocation is read. ``None`` when
    the source holds no call (the checker reports that as output in the wrong format)."""
    root, data = _tree(source, "java")
    call = _find_java_invocation(root)
    if call is None:
        return None
    name = _text(call.child_by_field_name("name"), data)
    obj = call.child_by_field_name("object")
    if obj is not None:
        name = f"{_text(obj, data)}.{name}"
    args: dict[Any, list[str]] = {}
    arguments = call.child_by_field_name("arguments")
    for child in arguments.children if arguments is not None else ():
        if child.type == "assignment_expression":
            key: Any = _text(child.children[0], data)
            args.setdefault(key, []).append(_java_value(child.children[2], data))
        elif child.type in ("identifier", "class_literal"):
            args.setdefault(None, []).append(_java_value(child, data))
    return [{name: _single_valued(args)}]


# -- JavaScript -------------------------------------------------------------------------------


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def parse_javascript_calls(source: str) -> list[dict[str, Any]] | None:
    """Parse ``method(a=1, b="x")``; the first top-level call statement is read. ``None``
    when there is none (reported by the checker as output in the wrong format)."""
    root, data = _tree(source, "javascript")
    for statement in root.children:
        if statement.type != "expression_statement":
            continue
        for expr in statement.children:
            if expr.type != "call_expression":
                continue
            name = _text(expr.children[0], data)
            args: dict[Any, list[str]] = {}
            for child in expr.children[1].children:
                if child.type == "assignment_expression":
                    key: Any = _text(child.children[0], data)
                    args.setdefault(key, []).append(_unquote(_text(child.children[2], data)))
                elif child.type in ("identifier", "true"):
                    # A bare argument is kept under a null key, which the checker then rejects.
                    args.setdefault(None, []).append(_text(child, data))
            return [{name: _single_valued(args)}]
    return None
