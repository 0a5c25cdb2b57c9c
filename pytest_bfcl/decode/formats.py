"""The JSON and XML return formats of prompting mode."""

from __future__ import annotations

import ast
import json
import xml.etree.ElementTree as ET
from typing import Any

from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.lazy_lists import ItemList, skip_space

# The reference cuts the call list out of the text with ``re.search`` and the pattern
# ``\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]`` (DOTALL), which backtracks exponentially on
# ``[{}, {}, ... x``; the same match, in linear time (see ``decode.lazy_lists``).
_JSON_CALL_LIST = ItemList(item_open="{", item_close="}", close="]", dotall=True)


def json_call_list_span(text: str) -> tuple[int, int] | None:
    """Start and end of the reference regex's match in ``text``, or ``None``."""
    table = _JSON_CALL_LIST.table(text)
    start = text.find("[")
    while start >= 0:
        end = table.items_end(skip_space(text, start + 1))
        if end is not None:
            return start, end
        start = text.find("[", start + 1)
    return None


def parse_json_calls(text: str) -> list[dict[str, Any]]:
    """``[{"function": name, "parameters": {...}}, ...]`` -> calls."""
    span = json_call_list_span(text)
    if span is not None:
        text = text[span[0] : span[1]]
    try:
        decoded = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return []  # Quirk: unreadable JSON is "no calls", not a decode failure
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise DecodeError(f"unreadable JSON: {exc}") from None
    if isinstance(decoded, dict | str):
        return []  # iterating keys or characters finds no call objects
    if not isinstance(decoded, list):
        raise DecodeError(f"expected a JSON list of calls, got {type(decoded).__name__}")
    calls = []
    for item in decoded:
        if not isinstance(item, dict):
            continue
        try:
            calls.append({item["function"]: item["parameters"]})
        except KeyError as exc:
            raise DecodeError(f"JSON call object lacks the key {exc}") from None
        except TypeError as exc:  # an unhashable function name
            raise DecodeError(f"bad function name in JSON call: {exc}") from None
    return calls


def _typed(raw: str, type_name: str) -> Any:
    """Convert an XML parameter's text by its declared type."""
    try:
        if type_name == "string":
            return raw
        if type_name == "integer":
            return int(raw)
        if type_name == "float":
            return float(raw)
        if type_name == "boolean":
            return raw.lower() == "true"
        if type_name == "null":
            return None
        if type_name in ("array", "tuple", "object", "dict"):
            return ast.literal_eval(raw)  # literal parsing only, never evaluation
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise DecodeError(f"cannot read {raw!r} as {type_name}: {exc}") from None
    return raw


def _xml_root(text: str) -> ET.Element:
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        # Entity definitions are how XML expansion bombs work; calls never need them.
        raise DecodeError("XML with a DOCTYPE or ENTITY declaration is not accepted")
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        raise DecodeError(f"malformed XML: {exc}") from None


def _function_name(func: ET.Element) -> str:
    try:
        return func.attrib["name"]
    except KeyError:
        raise DecodeError("<function> without a name attribute") from None


def parse_verbose_xml_calls(text: str) -> list[dict[str, Any]]:
    """``<functions><function name=..><params><param name value type/>..`` -> calls."""
    calls = []
    for func in _xml_root(text).findall("function"):
        container = func.find("params")
        params = container.findall("param") if container is not None else func.findall("param")
        args = {
            p.attrib.get("name"): _typed(p.attrib.get("value", ""), p.attrib.get("type", "string"))
            for p in params
        }
        calls.append({_function_name(func): args})
    return calls


def parse_concise_xml_calls(text: str) -> list[dict[str, Any]]:
    """``<functions><function name=..><param name type>value</param>..`` -> calls."""
    calls = []
    for func in _xml_root(text).findall("function"):
        args = {}
        for p in func.findall("param"):
            if "name" not in p.attrib:
                raise DecodeError("<param> without a name attribute")
            args[p.attrib["name"]] = _typed((p.text or "").strip(), p.attrib.get("type", "string"))
        calls.append({_function_name(func): args})
    return calls
