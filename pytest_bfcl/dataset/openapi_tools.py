"""The benchmark's function docs as OpenAI-compatible tools: BFCL's types mapped to JSON-schema
types (a float also marked as one in its description, with the benchmark's own words), dotted
names shown with underscores. The function-calling clients send them; some open-weight
handlers write them into their prompts."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.dataset.texts import ProtocolTexts

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


def shown_name(name: str, underscore_names: bool = True) -> str:
    """A function's name as a model is shown it in function-calling mode: with the
    function-name convention on, dots become underscores (OpenAI's names allow none) and the
    checker maps them back; with it off, the name as the docs write it, which is what the
    checker expects."""
    return name.replace(".", "_") if underscore_names else name


def to_openai_tools(
    docs: list[dict[str, Any]], texts: ProtocolTexts, underscore_names: bool = True
) -> list[dict[str, Any]]:
    """OpenAI Chat Completions tools, named as :func:`shown_name` says."""
    tools = []
    for doc in docs:
        parameters = dict(doc.get("parameters", {}))
        parameters["type"] = "object"
        parameters["properties"] = cast_properties(
            parameters.get("properties", {}), texts.float_hint
        )
        function = {
            "name": shown_name(doc["name"], underscore_names),
            "description": doc.get("description", ""),
            "parameters": parameters,
        }
        if "response" in doc:
            function["response"] = doc["response"]
        tools.append({"type": "function", "function": function})
    return tools


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
