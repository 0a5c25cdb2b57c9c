"""The instruction texts the leaderboard's open-weight handlers write into their prompts (the
tools preamble of Qwen's function-calling prompt, Llama 3.1's instructions and dates), read
from the pinned release's handler modules by static parsing.

They are the benchmark's model-facing texts, so they are never copied here: each handler
method is parsed with :mod:`ast` and its plain string literals are read in source order; a
family picks the ones it needs by how they begin. Nothing from the distribution is imported
or executed. A release that rewords a text still renders (the new words are read); one that
drops a text is refused with the handler and the text's beginning named.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.dataset.texts import SOURCE_MAX, module_constants
from pytest_bfcl.files import read_small_text

LOCAL_HANDLER_DIR = "bfcl_eval/model_handler/local_inference"


@cache
def method_strings(root: Path, module: str, class_name: str, method: str) -> tuple[str, ...]:
    """The plain string literals of ``class_name.method`` in ``local_inference/module.py``,
    in source order (the docstring and f-strings left out)."""
    path = root / LOCAL_HANDLER_DIR / f"{module}.py"
    try:
        tree = ast.parse(read_small_text(path, SOURCE_MAX))
    except (OSError, ValueError, SyntaxError) as exc:
        raise DatasetError(f"cannot read the handler module {path}: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    return tuple(_literals(item))
    raise DatasetError(f"{path} defines no {class_name}.{method}")


def _literals(func: ast.FunctionDef) -> list[str]:
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring (a copy of the chat template, not what is sent)
    found: list[tuple[int, int, str]] = []
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.JoinedStr):
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append((node.lineno, node.col_offset, node.value))
    # f-strings' own pieces are Constants too: leave out those inside a JoinedStr
    inside = {
        (part.lineno, part.col_offset)
        for stmt in body
        for node in ast.walk(stmt)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
        if isinstance(part, ast.Constant)
    }
    return [text for line, col, text in sorted(found) if (line, col) not in inside]


def text_starting(root: Path, where: tuple[str, str, str], start: str, *, nth: int = 0) -> str:
    """The ``nth`` string literal of the handler method ``where`` (module, class, method)
    that begins with ``start``."""
    matches = [s for s in method_strings(root, *where) if s.startswith(start)]
    if len(matches) <= nth:
        module, class_name, method = where
        raise DatasetError(
            f"the pinned release's {class_name}.{method} ({module}.py) has no text beginning "
            f"{start!r}; this release's prompts are not known to pytest-bfcl"
        )
    return matches[nth]


def module_text(root: Path, module: str, name: str) -> str:
    """A module-level string constant of ``local_inference/module.py``."""
    path = root / LOCAL_HANDLER_DIR / f"{module}.py"
    value = _constants(path).get(name)
    if not isinstance(value, str):
        raise DatasetError(f"{path} has no text constant {name}; this release is not known")
    return value


@cache
def _constants(path: Path) -> dict[str, object]:
    try:
        return module_constants(path)
    except (OSError, SyntaxError) as exc:
        raise DatasetError(f"cannot read the handler module {path}: {exc}") from None


@cache
def init_value(root: Path, module: str, class_name: str, attribute: str) -> object:
    """The literal a handler's ``__init__`` assigns to ``self.attribute`` (its stop token
    ids, say), read without running it."""
    path = root / LOCAL_HANDLER_DIR / f"{module}.py"
    try:
        tree = ast.parse(read_small_text(path, SOURCE_MAX))
    except (OSError, ValueError, SyntaxError) as exc:
        raise DatasetError(f"cannot read the handler module {path}: {exc}") from None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == class_name):
            continue
        for item in node.body:
            if not (isinstance(item, ast.FunctionDef) and item.name == "__init__"):
                continue
            for stmt in ast.walk(item):
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr == attribute for t in stmt.targets
                ):
                    try:
                        return ast.literal_eval(stmt.value)
                    except ValueError:
                        break
    raise DatasetError(
        f"the pinned release's {class_name}.__init__ ({module}.py) sets no literal "
        f"{attribute}; this release is not known to pytest-bfcl"
    )
