"""Convert a JavaScript value written by the model (always a string) into a Python value.

Strings that do not fit the expected form come back unchanged; the type check decides. The
reference's regex-based collection parsing is kept, quirks included (naive comma splitting,
quoted numbers in objects read as numbers), because scores depend on it.
"""

from __future__ import annotations

import re
from typing import Any

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
_ARRAY_2D = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)
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


def _array(code: str, item_type: str | None) -> Any:
    try:
        match = _ARRAY_2D.match(code)
        if match:
            rows = []
            for idx, inner in enumerate(_INNER.findall(match.group(0))):
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
