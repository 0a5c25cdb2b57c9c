"""The AST checker for single-turn categories: one decoded call list against the ground truth.

Rules follow the reference evaluator (exact typing with int-to-float leniency at the top level,
string standardisation, list/dict/list-of-dict matching, Java and JavaScript conversion, greedy
order-free parallel matching). Quirks that change scores are kept and marked ``Quirk``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pytest_bfcl.check.java_values import JAVA_TYPES, convert_java
from pytest_bfcl.check.js_values import JS_TYPES, convert_js
from pytest_bfcl.dataset.models import FunctionDoc
from pytest_bfcl.decode.limits import clip

PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_PYTHON_NESTED = ("array", "tuple")
_CONVERTED_NESTED = ("Array", "ArrayList", "array")
_STANDARDIZE = re.compile(r"[ ,./\-_*^]")

Call = dict[str, dict[Any, Any]]
Expected = dict[str, dict[str, list[Any]]]


@dataclass(frozen=True)
class CheckResult:
    valid: bool
    error_type: str | None = None
    errors: list[Any] = field(default_factory=list)

    @classmethod
    def fail(cls, error_type: str, *errors: Any) -> CheckResult:
        return cls(False, error_type, list(errors))


OK = CheckResult(True)


@dataclass(frozen=True)
class CheckOptions:
    language: str = "python"  # python | java | javascript
    underscore_to_dot: bool = False  # FC models see dotted names with "." replaced by "_"


def _shown(value: Any) -> str:
    """A value in a failure message: its repr, cut short (a value can be a megabyte long)."""
    return clip(repr(value), 500)


def standardize(text: str) -> str:
    """Drop spaces and ``,./-_*^``, lower-case, and turn ``'`` into ``"``."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


# -- dispatch -----------------------------------------------------------------------------------


def check_calls(
    docs: list[FunctionDoc],
    calls: list[Call],
    expected: list[Expected],
    rules: str,
    options: CheckOptions,
) -> CheckResult:
    """Check a decoded call list under a category's declared rules (``Category.checker``):
    ``simple``, ``multiple``, or ``parallel`` and ``parallel_multiple`` (both order-free)."""
    if rules in ("parallel", "parallel_multiple"):
        return check_parallel_no_order(docs, calls, expected, options)
    if rules == "multiple":
        return check_multiple(docs, calls, expected, options)
    if rules != "simple":
        raise ValueError(f"unknown AST rules {rules!r}: simple, multiple, parallel, or both")
    if len(calls) != 1:
        return CheckResult.fail("simple_function_checker:wrong_count", "Wrong number of functions.")
    return check_one_call(docs[0], calls[0], expected[0], options)


def find_doc(docs: list[FunctionDoc], name: str) -> FunctionDoc:
    for doc in docs:
        if doc.name == name:
            return doc
    raise KeyError(f"the ground truth names {name!r}, which is not among the entry's functions")


def check_multiple(
    docs: list[FunctionDoc], calls: list[Call], expected: list[Expected], options: CheckOptions
) -> CheckResult:
    if len(calls) != len(expected):
        return CheckResult.fail(
            "multiple_function_checker:wrong_count", "Wrong number of functions."
        )
    doc = find_doc(docs, next(iter(expected[0])))
    return check_one_call(doc, calls[0], expected[0], options)


def check_parallel_no_order(
    docs: list[FunctionDoc], calls: list[Call], expected: list[Expected], options: CheckOptions
) -> CheckResult:
    """Greedy first-fit matching of expected calls to model calls, as the reference does.

    Quirk: this is not a maximum matching; an early, looser expected call can take the model call
    that a later one needed.
    """
    if len(calls) != len(expected):
        return CheckResult.fail(
            "parallel_function_checker_no_order:wrong_count", "Wrong number of functions."
        )
    matched: set[int] = set()
    for i, want in enumerate(expected):
        doc = find_doc(docs, next(iter(want)))
        tried: list[Any] = []
        found = False
        for index, call in enumerate(calls):
            if index in matched:
                continue
            result = check_one_call(doc, call, want, options)
            if result.valid:
                matched.add(index)
                found = True
                break
            tried.append(
                {
                    f"Model Result Index {index}": {
                        "sub_error": result.errors,
                        "sub_error_type": result.error_type,
                        "model_output_item": call,
                        "possible_answer_item": want,
                    }
                }
            )
        if not found:
            open_indices = [k for k in range(len(calls)) if k not in matched]
            return CheckResult.fail(
                "parallel_function_checker_no_order:cannot_find_match",
                f"Could not find a matching function among index {open_indices} of model "
                f"output for index {i} of possible answers.",
                *tried,
            )
    return OK


# -- one call -----------------------------------------------------------------------------------


def expected_name(name: str, options: CheckOptions) -> str:
    if "." in name and options.underscore_to_dot:
        return name.replace(".", "_")
    return name


def check_one_call(
    doc: FunctionDoc, call: Call, expected: Expected, options: CheckOptions
) -> CheckResult:
    candidates_by_param = next(iter(expected.values()))
    name = expected_name(doc.name, options)
    if name not in call:
        return CheckResult.fail(
            "simple_function_checker:wrong_func_name",
            f"Function name {name!r} not found in model output.",
        )
    args = call[name]
    properties = doc.parameters.properties
    for param in doc.parameters.required:
        if param not in args:
            return CheckResult.fail(
                "simple_function_checker:missing_required",
                f"Missing required parameter: {_shown(param)}.",
            )
    for param, value in args.items():
        if param not in properties or param not in candidates_by_param:
            return CheckResult.fail(
                "simple_function_checker:unexpected_param",
                f"Unexpected parameter: {_shown(param)}.",
            )
        result = check_param(param, value, properties[param], candidates_by_param[param], options)
        if not result.valid:
            return result
    for param, candidates in candidates_by_param.items():
        if param not in args and "" not in candidates:
            return CheckResult.fail(
                "simple_function_checker:missing_optional",
                f"Optional parameter {_shown(param)} not provided and not marked as optional.",
            )
    return OK


def _expected_classes(
    schema: dict[str, Any], language: str
) -> tuple[type, type | None, str | None]:
    """(expected class, nested class, item type name) of a parameter schema."""
    doc_type = schema.get("type")
    table = {"java": JAVA_TYPES, "javascript": JS_TYPES}.get(language, PYTHON_TYPES)
    if doc_type not in table:
        raise ValueError(f"unsupported {language} parameter type {doc_type!r}")
    nested_kinds = _PYTHON_NESTED if language == "python" else _CONVERTED_NESTED
    if doc_type in nested_kinds:
        item_type = schema["items"]["type"]
        if item_type not in table:
            raise ValueError(f"unsupported {language} item type {item_type!r}")
        return table[doc_type], table[item_type], item_type
    return table[doc_type], None, None


def check_param(
    param: str, value: Any, schema: dict[str, Any], candidates: list[Any], options: CheckOptions
) -> CheckResult:
    language = options.language
    doc_type = schema.get("type")
    expected_cls, nested_cls, item_type = _expected_classes(schema, language)
    if language in ("java", "javascript"):
        if type(value) is not str:
            return CheckResult.fail(
                "type_error:java" if language == "java" else "type_error:js",
                f"Incorrect type for parameter {_shown(param)}. Expected type String, got "
                f"{type(value).__name__}. Parameter value: {_shown(value)}.",
            )
        convert = convert_java if language == "java" else convert_js
        value = convert(value, doc_type, item_type)  # type: ignore[arg-type]
    if doc_type == "tuple" and type(value) is tuple:
        value = list(value)
    if language == "python" and doc_type == "float" and type(value) is int:
        value = float(value)  # int-to-float leniency, top level only
    typed = check_type(param, value, candidates, str(doc_type), expected_cls, nested_cls)
    if not typed.valid:
        return typed.result
    if not typed.is_variable:
        if expected_cls is dict:
            return check_dict(param, value, candidates)
        if expected_cls is list and nested_cls is dict:
            return check_list_of_dicts(param, value, candidates)
        if expected_cls is str:
            return check_string(param, value, candidates)
        if expected_cls is list:
            return check_list(param, value, candidates)
    if value not in candidates:
        return CheckResult.fail(
            "value_error:others",
            f"Invalid value for parameter {_shown(param)}: {_shown(value)}. "
            f"Expected one of {candidates}.",
        )
    return OK


# -- types --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TypeCheck:
    valid: bool
    is_variable: bool
    result: CheckResult = OK


def _candidate_type(candidates: list[Any]) -> type | None:
    """Type of the first candidate that is not the optional marker ``""``."""
    for candidate in candidates:
        if candidate != "":
            return type(candidate)
    return None


def check_type(
    param: str,
    value: Any,
    candidates: list[Any],
    doc_type: str,
    expected_cls: type[Any],  # not a bare ``type``: mypy would narrow a matching value to object
    nested_cls: type | None,
) -> TypeCheck:
    """Exact type check with one level of nesting.

    A value whose type differs from the doc type but equals the candidates' type is a
    "variable" (e.g. a string naming a variable where an integer was expected) and passes.
    """
    candidate_type = _candidate_type(candidates)
    is_variable = candidate_type is not None and candidate_type is not expected_cls
    nested_error: str | None = None
    if type(value) is expected_cls:
        if nested_cls is None:
            return TypeCheck(True, is_variable)
        for candidate in candidates:
            if type(candidate) is not list or all(
                check_type(param, item, candidate, str(nested_cls), nested_cls, None).valid
                for item in value
            ):
                return TypeCheck(True, is_variable)
        nested_error = (
            f"Nested type checking failed for parameter {_shown(param)}. Expected outer type "
            f"{doc_type} with inner type {nested_cls}. Parameter value: {_shown(value)}."
        )
    if candidate_type is not None and type(value) is candidate_type:
        if nested_error is None:
            return TypeCheck(True, True)
        return TypeCheck(False, True, CheckResult.fail("type_error:nested", nested_error))
    message = (
        f"Incorrect type for parameter {_shown(param)}. Expected type {doc_type}, got "
        f"{type(value).__name__}. Parameter value: {_shown(value)}."
    )
    errors = [nested_error, message] if nested_error else [message]
    return TypeCheck(False, is_variable, CheckResult.fail("type_error:simple", *errors))


# -- values -------------------------------------------------------------------------------------


def _standardized(values: Any) -> list[Any]:
    return [standardize(v) if type(v) is str else v for v in values]


def check_string(param: str, value: str, candidates: list[Any]) -> CheckResult:
    allowed = [standardize(c) for c in candidates if type(c) is str]
    if standardize(value) not in allowed:
        return CheckResult.fail(
            "value_error:string",
            f"Invalid value for parameter {_shown(param)}: {_shown(value)}. "
            f"Expected one of {candidates}. Case insensitive.",
        )
    return OK


def check_list(param: str, value: list[Any], candidates: list[Any]) -> CheckResult:
    got = _standardized(value)
    allowed = []
    for candidate in candidates:
        # Quirk: a non-list candidate is iterated too, so the optional marker "" reads as [].
        try:
            allowed.append(_standardized(candidate))
        except TypeError:
            continue  # not iterable (a number): it can match no list
    if got not in allowed:
        return CheckResult.fail(
            "value_error:list/tuple",
            f"Invalid value for parameter {_shown(param)}: {_shown(value)}. "
            f"Expected one of {candidates}.",
        )
    return OK


def check_dict(param: str, value: dict[Any, Any], candidates: list[Any]) -> CheckResult:
    """Match a dict against candidate dicts whose values are candidate lists (one level deep)."""
    result = CheckResult.fail("dict_checker:unclear")
    for candidate in candidates:
        if candidate == "":
            continue
        result = _match_dict(value, candidate)
        if result.valid:
            return OK
    return result


def _match_dict(value: dict[Any, Any], candidate: dict[str, list[Any]]) -> CheckResult:
    errors: list[str] = []
    error_type: str | None = None
    for key, item in value.items():
        if key not in candidate:
            errors.append(f"Unexpected dict key parameter: '{key}'.")
            error_type = "value_error:dict_key"
            break
        got = standardize(item) if type(item) is str else item
        allowed = _standardized(candidate[key])
        if got not in allowed:
            errors.append(
                f"Invalid value for parameter {_shown(key)}: {_shown(item)}. "
                f"Expected one of {allowed}."
            )
            error_type = "value_error:dict_value"
            break
    # Quirk: the missing-key scan runs even after a failure above, and its error type wins.
    for key, allowed_values in candidate.items():
        if key not in value and "" not in allowed_values:
            errors.append(f"Missing dict key parameter: '{key}'.")
            error_type = "value_error:dict_key"
            break
    return CheckResult.fail(error_type, *errors) if error_type else OK


def check_list_of_dicts(param: str, value: list[Any], candidates: list[Any]) -> CheckResult:
    """Each candidate is a list of candidate dicts, matched position by position."""
    result = CheckResult.fail("list_dict_checker:unclear")
    for candidate in candidates:
        if len(value) != len(candidate):
            result = CheckResult.fail(
                "value_error:list_dict_count", "Wrong number of dictionaries in the list."
            )
            continue
        for item, candidate_dict in zip(value, candidate, strict=True):
            result = check_dict(param, item, [candidate_dict])
            if not result.valid:
                break
        else:
            return OK
    return result
