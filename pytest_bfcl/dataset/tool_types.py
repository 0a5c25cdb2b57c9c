"""The benchmark's parameter types as JSON-schema types, as the leaderboard casts function
docs for OpenAI-compatible tools (and for the open-weight handlers that show them so)."""

from __future__ import annotations

from typing import Any

# BFCL type -> JSON-schema type for OpenAI-compatible tools.
OPENAPI_TYPES: dict[str, str] = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "string": "string",
    "char": "string",
    "String": "string",
    "Any": "string",
    "any": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "ArrayList": "array",
    "Array": "array",
    "Queue": "array",
    "Stack": "array",
    "dict": "object",
    "object": "object",
    "HashMap": "object",
    "Hashtable": "object",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "Bigint": "integer",
}


class ToolSchemaError(ValueError):
    pass


def _map_type(kind: Any) -> str:
    if kind not in OPENAPI_TYPES:
        raise ToolSchemaError(f"no JSON-schema type for item type {kind!r}")
    return OPENAPI_TYPES[kind]


def cast_properties(properties: dict[str, Any], float_hint: str) -> dict[str, Any]:
    """Each parameter's BFCL type as its JSON-schema type, floats described as such with
    ``float_hint``; nested properties and items too. Changes ``properties`` in place."""
    for schema in properties.values():
        kind = schema.get("type")
        if kind is None:
            schema["type"] = "string"
        else:
            if kind == "float":
                schema["format"] = "float"
                schema["description"] = schema.get("description", "") + float_hint
            schema["type"] = OPENAPI_TYPES.get(kind, "string")
        if schema["type"] not in ("array", "object"):
            continue
        if "properties" in schema:
            schema["properties"] = cast_properties(schema["properties"], float_hint)
        elif "items" in schema:
            items = schema["items"]
            items["type"] = _map_type(items.get("type"))
            if items["type"] == "array" and "items" in items:
                items["items"]["type"] = _map_type(items["items"].get("type"))
            elif items["type"] == "object" and "properties" in items:
                items["properties"] = cast_properties(items["properties"], float_hint)
    return properties


__all__ = ["OPENAPI_TYPES", "ToolSchemaError", "cast_properties"]
