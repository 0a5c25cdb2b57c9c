"""Convert a JavaScript value written by the model (always a string) into a Python value.

Strings that do not fit the expected form come back unchanged; the type check decides. The
reference's regex-based collection parsing is kept, quirks included (naive comma splitting,
quoted numbers in objects read as numbers), because scores depend on it.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_bfcl.decode.lazy_lists import ItemList, lazy_list_end, skip_space
from pytest_bfcl.decode.limits import MAX_CONVERTED_CHARS

JS_TYPES: dict[str, type] = {
    "String": str,
    "integer": int,
    "float": float,
    "Bigint": int,
    "Boolean": bool,
    "dict": dict,
    "array": list,
    "any": str,
}

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_BIGINT = re.compile(r"^-?\d+n$")
# The reference matches 2-D arrays with
#   \[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)
# (``re.match``), which backtracks exponentially (a 100-character ``[[], [], ...`` takes
# seconds); ``_array_2d_end`` finds the same match in linear time (decode.lazy_lists).
_ROWS_IN_BRACKETS = ItemList(item_open="[", item_close="]", close="]", dotall=False)
_ROWS_IN_NEW_ARRAY = ItemList(item_open="[", item_close="]", close=")", dotall=False)
_NEW_ARRAY = re.compile(r"new\s+Array\(")
_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_INNER = re.compile(r"\[(.*?)\]")
_OBJECT = re.compile(r"\{(.*?)\}")
_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


class UnsupportedJsType(ValueError):
    pass


def _quoted(text: str) -> bool:
    return (text.startswith('"') and text.endswith('"')) or (
        text.startswith("'") and text.endswith("'")
    )


def convert_js(value: str, js_type: str, item_type: str | None = None) -> Any:
    if js_type not in JS_TYPES:
        raise UnsupportedJsType(f"unsupported JavaScript type {js_type!r}")
    if len(value) > MAX_CONVERTED_CHARS:
        return value  # too long to read with the reference's regexes (see decode.limits)
    if js_type == "String":
        return value[1:-1] if _quoted(value) else value
    if js_type == "integer":
        return int(value) if _INT.match(value) else value
    if js_type == "float":
        return float(value) if _FLOAT.match(value) else value
    if js_type == "Bigint":
        return int(value[:-1]) if _BIGINT.match(value) else value
    if js_type == "Boolean":
        return value == "true" if value in ("true", "false") else value
    if js_type == "array":
        return _array(value.strip(), item_type)
    if js_type == "dict":
        return _object(value.strip())
    return value  # any


def _array_2d_end(code: str) -> int | None:
    """Where the reference's 2-D array pattern, matched at the start of ``code``, ends."""
    if code.startswith("["):
        end = lazy_list_end(_ROWS_IN_BRACKETS, code, skip_space(code, 1))
        if end is not None:
            return end
    opening = _NEW_ARRAY.match(code)  # ``\b`` holds at the start: ``n`` is a word character
    if opening is not None:
        return lazy_list_end(_ROWS_IN_NEW_ARRAY, code, skip_space(code, opening.end()))
    return None


def _array(code: str, item_type: str | None) -> Any:
    try:
        end = _array_2d_end(code)
        if end is not None:
            rows = []
            for idx, inner in enumerate(_INNER.findall(code[:end])):
                inner = inner.strip()
                if idx == 0 and inner.startswith("["):
                    inner = inner[1:]
                rows.append([js_literal(e.strip()) for e in inner.split(",")])
            return rows
        match = _ARRAY.match(code)
        if not match:
            return code
        content = match.group(1) if match.group(1) is not None else match.group(2)
        content = (content or "").strip()
        parts = content.split(",") if content else []  # Quirk: commas in strings split too
        if item_type:
            return [convert_js(p.strip(), item_type) for p in parts]
        return [js_literal(p.strip()) for p in parts]
    except Exception:  # the reference falls back to the raw text on any failure
        return code


def _object(code: str) -> Any:
    if code == "{}":
        return {}
    match = _OBJECT.match(code)  # Quirk: non-greedy, so nested braces cut the object short
    if not match:
        return code
    try:
        out: dict[str, Any] = {}
        for key, raw in _PAIR.findall(match.group(1)):
            key = key.strip().strip("'\"")
            raw = raw.strip()
            if raw.startswith("[") and raw.endswith("]"):
                out[key] = _array(raw, None)
            elif raw.startswith("{") and raw.endswith("}"):
                out[key] = _object(raw)
            else:
                # Quirk: quotes are stripped first, so '123' becomes the number 123.
                out[key] = js_literal(raw.strip("'\""))
        return out
    except Exception:
        return code


def js_literal(text: str) -> Any:
    """Read an untyped JavaScript literal."""
    text = text.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    if _quoted(text):
        return text[1:-1]
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text
