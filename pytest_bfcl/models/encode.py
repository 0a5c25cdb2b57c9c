"""Render calls the way a model would write them: tool calls (FC mode) or text in each prompting
return format, with Java and JavaScript values written as source. The oracle uses this to answer
with the ground truth through the same decoders a real model's output goes through."""

from __future__ import annotations

import ast
import inspect
import json
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from pytest_bfcl.backends.registry import backend_class
from pytest_bfcl.dataset.models import FunctionDoc
from pytest_bfcl.decode.prompting import PromptFormat
from pytest_bfcl.decode.python_calls import call_name, evaluate_literal_arithmetic
from pytest_bfcl.models.function_docs import shown_name

_MISSING = object()


# -- ground truth -> one concrete call ----------------------------------------------------------


def first_option(candidates: Any) -> Any:
    """The first acceptable value of a candidate list (``""`` marks "may be omitted")."""
    if not isinstance(candidates, list):
        return candidates
    for candidate in candidates:
        if candidate != "":
            return concrete_value(candidate)
    return _MISSING


def concrete_value(candidate: Any) -> Any:
    """Dict candidates map keys to candidate lists; lists of such dicts map element-wise."""
    if isinstance(candidate, dict):
        return _concrete_dict(candidate)
    if isinstance(candidate, list) and candidate and all(isinstance(c, dict) for c in candidate):
        return [_concrete_dict(c) for c in candidate]
    return candidate


def _concrete_dict(candidate: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, options in candidate.items():
        value = first_option(options)
        if value is not _MISSING:
            out[key] = value
    return out


def ground_truth_calls(expected: list[dict[str, dict[str, list[Any]]]]) -> list[dict[str, Any]]:
    """``[{name: {param: value}}]`` choosing the first acceptable value of every parameter and
    leaving out parameters whose only acceptable value is omission."""
    calls = []
    for call in expected:
        for name, params in call.items():
            args = {}
            for param, candidates in params.items():
                value = first_option(candidates)
                if value is not _MISSING:
                    args[param] = value
            calls.append({name: args})
    return calls


# -- Java and JavaScript source -----------------------------------------------------------------

_JAVA_ARRAY_ELEMENT = {"integer": "int", "long": "long", "String": "String", "char": "char"}


def _java_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _top_level_literal(text: str) -> str:
    """A top-level string argument in prompting mode: the parser strips the quotes of a literal
    and keeps escapes, so text with a double quote (typically a Java/JS expression such as
    ``new Foo("x")``) is written bare instead."""
    return text if '"' in text else _java_string(text)


def java_source(value: Any, java_type: str, item_type: str | None, prompting: bool) -> str:
    """Java source for a value of the given parameter type."""
    if isinstance(value, str):
        if not prompting:
            return value  # FC arguments are the source text itself
        if java_type == "char" and len(value) == 1:
            return f"'{value}'"
        return _top_level_literal(value)
    if java_type in ("String", "any", "char"):
        return json.dumps(value)
    if java_type == "boolean":
        return "true" if value else "false"
    if java_type == "long":
        return f"{value}L"
    if java_type == "float":
        return f"{float(value)!r}f"
    if java_type == "double":
        return repr(float(value))
    if java_type in ("ArrayList", "Array"):
        items = [_java_element(v, item_type) for v in value]
        if java_type == "ArrayList":
            if not items:
                return "new ArrayList<>()"
            return f"new ArrayList<>(Arrays.asList({', '.join(items)}))"
        element = _JAVA_ARRAY_ELEMENT.get(item_type or "", "Object")
        return f"new {element}[]{{{', '.join(items)}}}"
    if java_type == "HashMap":
        puts = " ".join(
            f"put({_java_string(k)}, {_java_element(v, None)});" for k, v in value.items()
        )
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)  # byte, short, integer


def _java_element(value: Any, item_type: str | None) -> str:
    if item_type == "char" and isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, str):
        return _java_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if item_type == "long":
        return f"{value}L"
    return repr(value)


def js_source(value: Any, js_type: str, prompting: bool) -> str:
    """JavaScript source for a value of the given parameter type."""
    if isinstance(value, str):
        return _top_level_literal(value) if prompting else value
    if js_type in ("String", "any"):
        return json.dumps(value)
    if js_type == "Boolean":
        return "true" if value else "false"
    if js_type == "Bigint":
        return f"{value}n"
    if js_type == "float":
        return _plain_number(float(value))
    if js_type in ("array", "dict"):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _plain_number(number: float) -> str:
    text = repr(number)
    return text if "e" not in text else f"{number:f}"


def _source_args(
    args: dict[str, Any], doc: FunctionDoc | None, language: str, prompting: bool
) -> dict[str, str]:
    properties = doc.parameters.properties if doc else {}
    out = {}
    for param, value in args.items():
        schema = properties.get(param, {})
        doc_type = schema.get("type", "String" if language == "javascript" else "any")
        if language == "java":
            item_type = (schema.get("items") or {}).get("type")
            out[param] = java_source(value, doc_type, item_type, prompting)
        else:
            out[param] = js_source(value, doc_type, prompting)
    return out


def _doc_for(docs: list[FunctionDoc], name: str) -> FunctionDoc | None:
    return next((d for d in docs if d.name == name), None)


# -- whole outputs ------------------------------------------------------------------------------


def fc_tool_calls(
    calls: list[dict[str, Any]],
    docs: list[FunctionDoc],
    language: str = "python",
    underscore_names: bool = True,
) -> list[dict[str, str]]:
    """Stored FC form: ``[{name: arguments_json}]``, each function named as the model was shown
    it (:func:`~pytest_bfcl.models.function_docs.shown_name`)."""
    out = []
    for call in calls:
        for name, args in call.items():
            if language != "python":
                args = _source_args(args, _doc_for(docs, name), language, prompting=False)
            tool_name = shown_name(name, underscore_names)
            out.append({tool_name: json.dumps(args, ensure_ascii=False)})
    return out


def prompting_text(
    calls: list[dict[str, Any]],
    docs: list[FunctionDoc],
    fmt: PromptFormat,
    language: str = "python",
) -> str:
    """Text in the configured return format, tagged with ``<TOOLCALL>`` when asked."""
    if language in ("java", "javascript"):
        # The reference reads only one Java/JavaScript call per output.
        name, args = next(iter(calls[0].items()))
        source = _source_args(args, _doc_for(docs, name), language, prompting=True)
        text = f"{name}({', '.join(f'{k}={v}' for k, v in source.items())})"
    elif fmt.ret_fmt == "python":
        text = "[" + ", ".join(_python_call(c) for c in calls) + "]"
    elif fmt.ret_fmt == "json":
        items = [{"function": n, "parameters": a} for c in calls for n, a in c.items()]
        text = json.dumps(items, ensure_ascii=False)
    else:
        text = _xml_calls(calls, verbose=fmt.ret_fmt == "verbose_xml")
    return f"<TOOLCALL>{text}</TOOLCALL>" if fmt.tool_call_tag else text


def _python_call(call: dict[str, Any]) -> str:
    name, args = next(iter(call.items()))
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def _xml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "dict"
    if value is None:
        return "null"
    return "string"


def _xml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def _xml_calls(calls: list[dict[str, Any]], verbose: bool) -> str:
    parts = ["<functions>"]
    for call in calls:
        for name, args in call.items():
            parts.append(f"<function name={quoteattr(name)}>")
            if verbose:
                parts.append("<params>")
            for param, value in args.items():
                kind = quoteattr(_xml_type(value))
                if verbose:
                    text = quoteattr(_xml_text(value))
                    parts.append(f"<param name={quoteattr(param)} value={text} type={kind}/>")
                else:
                    text = escape(_xml_text(value))
                    parts.append(f"<param name={quoteattr(param)} type={kind}>{text}</param>")
            if verbose:
                parts.append("</params>")
            parts.append("</function>")
    parts.append("</functions>")
    return "".join(parts)


def placeholder_call(doc: FunctionDoc) -> dict[str, Any]:
    """A call of ``doc`` with a plausible value for each required parameter (for relevance
    entries, which have no ground truth: any call counts)."""
    by_type = {
        "integer": 1,
        "float": 1.0,
        "number": 1.0,
        "boolean": True,
        "array": [],
        "tuple": [],
        "dict": {},
        "object": {},
    }
    args = {}
    for param in doc.parameters.required:
        schema = doc.parameters.properties.get(param, {})
        enum = schema.get("enum")
        args[param] = enum[0] if enum else by_type.get(schema.get("type", ""), "example")
    return {doc.name: args}


# -- multi-turn ground truth ---------------------------------------------------------------------


def keyword_call(call: str, classes: list[str]) -> dict[str, dict[str, Any]]:
    """A ground-truth call string (``sort('a.txt')``) as ``{name: {param: value}}``, with
    positional arguments named after the backend method's parameters (as a model would send
    them in a tool call). Values are read as literals; nothing is evaluated."""
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"not a call: {call!r}")
    name = call_name(node)
    owner = next(
        (backend_class(c) for c in classes if name in backend_class(c).public_methods()), None
    )
    if owner is None:
        raise ValueError(f"{name!r} is not a method of {classes}")
    params = [p for p in inspect.signature(getattr(owner, name)).parameters if p != "self"]
    args = {params[i]: evaluate_literal_arithmetic(a) for i, a in enumerate(node.args)}
    args.update({k.arg: evaluate_literal_arithmetic(k.value) for k in node.keywords if k.arg})
    return {name: args}
