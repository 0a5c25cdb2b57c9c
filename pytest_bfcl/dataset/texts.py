"""Model-facing texts of the benchmark (system prompt templates, language hints, answer-format
prompts), read from the pinned distribution's Python sources by static parsing.

These texts belong to the benchmark, not to this project, so they are never copied here: the
source files are parsed with :mod:`ast` and only literal values are read (strings, dicts,
lists, string concatenation, references to other module constants, and f-string templates).
Nothing from the distribution is imported or executed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.files import read_small_text

SOURCE_MAX = 16 << 20  # bytes of one of the release's Python files read as data

PROMPTS_FILE = "bfcl_eval/constants/default_prompts.py"
UTILS_FILE = "bfcl_eval/utils.py"
HANDLER_UTILS_FILE = "bfcl_eval/model_handler/utils.py"
WEB_SEARCH_FILE = "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/web_search.py"


@dataclass(frozen=True)
class Template:
    """An f-string from the sources, as text pieces and placeholders filled in order."""

    parts: tuple[str | None, ...]  # None marks a placeholder

    def render(self, *values: str) -> str:
        it = iter(values)
        return "".join(next(it) if part is None else part for part in self.parts)


@dataclass(frozen=True)
class ProtocolTexts:
    language_hints: dict[str, str]  # python | java | javascript -> sentence
    java_any: str
    java_typed: Template  # (type)
    java_items: Template  # (item type)
    js_any: str
    js_typed: Template
    js_items: Template
    js_dict: Template  # (JSON of the properties)
    float_hint: str
    output_formats: dict[str, str]
    param_types: dict[str, str]
    styles: dict[str, dict[str, str]]
    layouts: dict[str, str]
    default_config: str
    agentic_answer_format: str
    memory_instruction_core_archival: str  # placeholders {scenario_setting}, {memory_content}
    memory_instruction_unified: str
    memory_personas: dict[str, str]  # scenario -> persona text
    fetch_error_templates: tuple[str, ...]  # wording of simulated fetch failures
    added_functions_fc: str
    added_functions_prompting: str
    maximum_steps: int

    def memory_instruction(self, unified: bool, scenario: str, memory_content: str) -> str:
        """The system instruction of a memory conversation: the scenario's persona and the
        memory's current content (one unified memory for rec_sum, core/archival otherwise)."""
        template = (
            self.memory_instruction_unified if unified else self.memory_instruction_core_archival
        )
        if scenario not in self.memory_personas:
            raise DatasetError(f"no persona text for the memory scenario {scenario!r}")
        return template.format(
            scenario_setting=self.memory_personas[scenario], memory_content=memory_content
        )


def _static(node: ast.expr, env: dict[str, Any]) -> Any:
    """Value of a literal expression; names refer to earlier module constants."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ValueError(f"unknown name {node.id}")
        return env[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _static(node.left, env) + _static(node.right, env)
    if isinstance(node, ast.Dict):
        return {
            _static(k, env): _static(v, env)  # type: ignore[arg-type]
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.List | ast.Tuple):
        return [_static(e, env) for e in node.elts]
    if isinstance(node, ast.JoinedStr):
        return _template(node)
    raise ValueError(f"not a literal: {ast.dump(node)[:80]}")


def _template(node: ast.JoinedStr) -> Template:
    parts: list[str | None] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
        else:
            parts.append(None)
    return Template(tuple(parts))


def module_constants(path: Path) -> dict[str, Any]:
    """Every module-level ``NAME = <literal>`` of a source file."""
    tree = ast.parse(read_small_text(path, SOURCE_MAX), filename=str(path))
    env: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                try:
                    env[target.id] = _static(stmt.value, env)
                except ValueError:
                    continue
    return env


def _function(path: Path, name: str) -> ast.FunctionDef:
    tree = ast.parse(read_small_text(path, SOURCE_MAX), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise DatasetError(f"{path}: function {name} not found")


def _in_order(node: ast.AST, kind: type[ast.stmt]) -> list[Any]:
    found: list[tuple[int, int, Any]] = []
    for stmt in ast.walk(node):
        if isinstance(stmt, kind):
            value = stmt.value  # type: ignore[attr-defined]
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append((stmt.lineno, stmt.col_offset, value.value))
            elif isinstance(value, ast.JoinedStr):
                found.append((stmt.lineno, stmt.col_offset, _template(value)))
    return [v for _, _, v in sorted(found, key=lambda t: (t[0], t[1]))]


def _language_branches(func: ast.FunctionDef) -> tuple[list[Any], list[Any]]:
    """The hint texts appended in the Java branch and in the JavaScript branch."""
    for node in ast.walk(func):
        if isinstance(node, ast.If) and "is_java" in ast.unparse(node.test):
            java = _in_order(ast.Module(body=node.body, type_ignores=[]), ast.AugAssign)
            js_branch = node.orelse[0] if node.orelse else None
            js = _in_order(js_branch, ast.AugAssign) if js_branch is not None else []
            return java, js
    raise DatasetError("language hint branches not found in the distribution's sources")


@cache
def load_texts(root: Path) -> ProtocolTexts:
    """Read the texts from an unpacked distribution root (the directory holding bfcl_eval/)."""
    try:
        prompts = module_constants(root / PROMPTS_FILE)
        hint_returns = _in_order(
            _function(root / UTILS_FILE, "_get_language_specific_hint"), ast.Return
        )
        java, js = _language_branches(
            _function(root / UTILS_FILE, "_func_doc_language_specific_pre_processing")
        )
        float_hint = next(
            v
            for v in _in_order(
                _function(root / HANDLER_UTILS_FILE, "_cast_to_openai_type"), ast.AugAssign
            )
            if isinstance(v, str)
        )
        return ProtocolTexts(
            language_hints={
                "java": hint_returns[0],
                "javascript": hint_returns[1],
                "python": hint_returns[2],
            },
            java_any=java[0],
            java_typed=java[1],
            java_items=java[2],
            js_any=js[0],
            js_typed=js[1],
            js_items=js[2],
            js_dict=js[3],
            float_hint=float_hint,
            output_formats=prompts["OUTPUT_FORMAT_MAPPING"],
            param_types=prompts["PARAM_TYPE_MAPPING"],
            styles=prompts["PROMPT_STYLE_TEMPLATES"],
            layouts=prompts["PROMPT_TEMPLATE_MAPPING"],
            default_config=prompts["DEFAULT_SYSTEM_PROMPT_FORMAT"],
            agentic_answer_format=prompts["ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT"],
            memory_instruction_core_archival=prompts["MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL"],
            memory_instruction_unified=prompts["MEMORY_BACKEND_INSTRUCTION_UNIFIED"],
            memory_personas=prompts["MEMORY_AGENT_SETTINGS"],
            fetch_error_templates=tuple(
                module_constants(root / WEB_SEARCH_FILE)["ERROR_TEMPLATES"]
            ),
            added_functions_fc=prompts["DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC"],
            added_functions_prompting=prompts[
                "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING"
            ],
            maximum_steps=prompts["MAXIMUM_STEP_LIMIT"],
        )
    except (OSError, KeyError, IndexError, StopIteration, SyntaxError) as exc:
        raise DatasetError(
            f"cannot read the benchmark's model-facing texts under {root}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
