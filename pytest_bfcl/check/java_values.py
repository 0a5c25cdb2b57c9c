"""Convert a Java value written by the model (always a string) into a Python value.

Strings that do not fit the expected Java form are returned unchanged, so the type check then
decides (a string value against string candidates counts as a "variable"). Quirks of the
reference that affect scores are kept and marked.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_bfcl.decode.limits import MAX_CONVERTED_CHARS

JAVA_TYPES: dict[str, type] = {
    "byte": int,
    "short": int,
    "integer": int,
    "float": float,
    "double": float,
    "long": int,
    "boolean": bool,
    "char": str,
    "Array": list,
    "ArrayList": list,
    "Set": set,
    "HashMap": dict,
    "Hashtable": dict,
    "Queue": list,
    "Stack": list,
    "String": str,
    "any": str,
}

# re.match semantics on purpose: anchored at the start, and ``$`` also matches before a final
# newline, as in the reference.
_INT = re.compile(r"^-?\d+$")
_FLOAT_F = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_LONG = re.compile(r"^-?\d+[lL]$")
_F_SUFFIX = re.compile(r"[fF]$")
_L_SUFFIX = re.compile(r"[lL]$")
_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_ADD_BLOCK = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_ADD = re.compile(r"add\((.+?)\)")
_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_HASHMAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")


class UnsupportedJavaType(ValueError):
    pass


def convert_java(value: str, java_type: str, item_type: str | None = None) -> Any:
    if java_type not in JAVA_TYPES:
        raise UnsupportedJavaType(f"unsupported Java type {java_type!r}")
    if len(value) > MAX_CONVERTED_CHARS:
        return value  # too long to read with the reference's regexes (see decode.limits)
    if java_type in ("byte", "short", "integer"):
        return int(value) if _INT.match(value) else value
    if java_type == "float":
        return float(_F_SUFFIX.sub("", value)) if _FLOAT_F.match(value) else value
    if java_type == "double":
        return float(value) if _DOUBLE.match(value) else value
    if java_type == "long":
        # Quirk: a bare ``123`` is not a long; the L suffix is required.
        return int(_L_SUFFIX.sub("", value)) if _LONG.match(value) else value
    if java_type == "boolean":
        return value == "true" if value in ("true", "false") else value
    if java_type in ("char", "String", "any"):
        # Quirk: the reference's char pattern can never match, so chars keep their quotes.
        return value
    if java_type == "ArrayList":
        return _array_list(value, item_type)
    if java_type == "Array":
        return _array(value, item_type)
    if java_type == "HashMap":
        return _hash_map(value)
    raise UnsupportedJavaType(f"conversion of Java {java_type} is not supported")


def _element(text: str, item_type: str | None) -> Any:
    if item_type in ("char", "String"):
        return text[1:-1]
    return convert_java(text, item_type) if item_type else java_literal(text)


def _array_list(value: str, item_type: str | None) -> Any:
    match = _AS_LIST.search(value)
    if match:
        # Quirk: with item type ``any`` elements stay raw text, quotes included.
        return [_element(part.strip(), item_type) for part in match.group(1).split(",")]
    match = _ADD_BLOCK.search(value)
    if match:
        return [_element(m.strip(), item_type) for m in _ADD.findall(match.group(1))]
    return [] if _EMPTY_LIST.search(value) else value


def _array(value: str, item_type: str | None) -> Any:
    match = _ARRAY.search(value)
    if not match:
        return value
    parts = [p.strip() for p in match.group(1).split(",") if p.strip()]
    # Quirk: String elements keep their double quotes (String conversion is the identity).
    return [convert_java(p, item_type) if item_type else java_literal(p) for p in parts]


def _hash_map(value: str) -> Any:
    match = _HASHMAP.search(value)
    if match:
        body = match.group(1)
        if not body.strip():
            return {}
        return {key: java_literal(raw.strip()) for key, raw in _PUT.findall(body)}
    return {} if _EMPTY_MAP.search(value) else value


def java_literal(text: str) -> Any:
    """Read an untyped Java literal (HashMap values, untyped collection elements)."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _LONG.match(text):
        return int(text[:-1])
    if _FLOAT_F.match(text):
        return float(text[:-1])
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text
