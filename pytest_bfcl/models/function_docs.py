"""What a model is shown of the functions: docs with the benchmark's language hints, converted to
OpenAI-compatible tools (function-calling mode) or rendered into the system prompt (prompting
mode). The sentences come from the pinned distribution (:mod:`pytest_bfcl.dataset.texts`)."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.dataset.openapi_tools import (
    OPENAPI_TYPES,
    ToolSchemaError,
    shown_name,
    to_openai_tools,
)
from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.decode.prompting import PromptFormat

# -- language hints (all modes) -----------------------------------------------------------------


def with_language_hints(
    docs: list[dict[str, Any]], language: str, texts: ProtocolTexts
) -> list[dict[str, Any]]:
    """Append the language hint to each description; for Java and JavaScript also describe
    every top-level parameter as a string in that language. Modifies and returns ``docs``."""
    for doc in docs:
        doc["description"] = doc.get("description", "") + texts.language_hints[language]
        if language not in ("java", "javascript"):
            continue
        for schema in doc.get("parameters", {}).get("properties", {}).values():
            _hint_parameter(schema, language, texts)
    return docs


def _hint_parameter(schema: dict[str, Any], language: str, texts: ProtocolTexts) -> None:
    kind = schema.get("type")
    java = language == "java"
    if kind == "any":
        schema["description"] = schema.get("description", "") + (
            texts.java_any if java else texts.js_any
        )
    else:
        typed = texts.java_typed if java else texts.js_typed
        schema["description"] = schema.get("description", "") + typed.render(str(kind))
    if kind in (("ArrayList", "Array") if java else ("array",)):
        items = texts.java_items if java else texts.js_items
        schema["description"] += items.render(str(schema["items"]["type"]))
        del schema["items"]
    if not java and kind == "dict" and "properties" in schema:
        schema["description"] += texts.js_dict.render(json.dumps(schema["properties"]))
        del schema["properties"]
    schema["type"] = "string"


# -- prompting mode -----------------------------------------------------------------------------


def system_prompt(docs: list[dict[str, Any]], fmt: PromptFormat, texts: ProtocolTexts) -> str:
    """The benchmark's system prompt for a prompt format, with the docs rendered into it."""
    style = texts.styles[fmt.style]
    call_format = style["tool_call_with_tag" if fmt.tool_call_tag else "tool_call_no_tag"]
    tool_call_format = call_format.format(
        output_format=texts.output_formats[fmt.ret_fmt],
        param_types=texts.param_types[fmt.ret_fmt],
    )
    available_tools = style["available_tools"].format(
        format=fmt.func_doc_fmt, functions=render_docs(docs, fmt.func_doc_fmt)
    )
    return texts.layouts[fmt.prompt_fmt].format(
        persona=style["persona"],
        task=style["task"],
        tool_call_format=tool_call_format,
        multiturn_behavior=style["multiturn_behavior"],
        available_tools=available_tools,
    )


def render_docs(docs: list[dict[str, Any]], doc_format: str) -> str:
    if doc_format == "json":
        return json.dumps(docs, indent=4)
    if doc_format == "xml":
        return "\n".join(_xml_function(doc) for doc in docs)
    if doc_format == "python":
        blocks: list[str] = []
        for doc in docs:
            blocks += [_python_function(doc), "\n"]
        return "\n\n".join(blocks)
    raise ValueError(f"unknown function doc format {doc_format!r}")


def _xml_function(doc: dict[str, Any]) -> str:
    schema = doc["parameters"]
    required = schema.get("required")
    params = "".join(
        _xml_param(name, meta, required, 4) for name, meta in schema.get("properties", {}).items()
    )
    return (
        f'<function name="{doc["name"]}">\n  <desc>{doc.get("description", "")}</desc>\n'
        f"  <params>\n{params}  </params>\n</function>\n"
    )


def _xml_param(name: str, meta: dict[str, Any], required: list[str] | None, indent: int) -> str:
    pad = " " * indent
    kind = meta.get("type", "string")
    desc = meta.get("description", "")
    if "enum" in meta:
        desc += f" Enum values: {meta['enum']}."
    if "items" in meta and "type" in meta["items"]:
        kind = f"{kind}[{meta['items']['type']}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{meta['additionalProperties'].get('type', 'string')}]"
    is_required = "true" if required is None or name in required else "false"
    attrs = f'name="{name}" type="{kind}" required="{is_required}"'
    if "default" in meta:
        attrs += f' default="{meta["default"]!r}"'
    # Quirk: the reference deletes every comma of the opening tag, defaults included.
    parts = [f"{pad}<param {attrs.replace(',', '')}>\n", f"{pad}  <desc>{desc}</desc>\n"]
    if "properties" in meta:
        parts.append(f"{pad}  <params>\n")
        for child, child_meta in meta["properties"].items():
            parts.append(_xml_param(child, child_meta, meta.get("required"), indent + 4))
        parts.append(f"{pad}  </params>\n")
    parts.append(f"{pad}</param>\n")
    return "".join(parts)


def _python_type(meta: dict[str, Any]) -> str:
    kind = meta.get("type", "string")
    simple = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}
    if kind in simple:
        return simple[kind]
    if kind in ("array", "list", "tuple") and "items" in meta:
        return f"list[{_python_type(meta['items'])}]"
    if kind in ("object", "dict"):
        extra = meta.get("additionalProperties")
        return f"dict[str, {_python_type(extra)}]" if extra is not None else "dict"
    return str(kind)


def _python_param(name: str, meta: dict[str, Any], depth: int) -> str:
    desc = meta.get("description", "")
    if "enum" in meta:
        desc += f" Enum values: {meta['enum']}."
    default = f", default={meta['default']!r}" if "default" in meta else ""
    line = f"{' ' * (8 + 4 * depth)}{name} ({_python_type(meta)}{default}): {desc}\n"
    children = meta.get("properties", {})
    return line + "".join(_python_param(n, m, depth + 1) for n, m in children.items())


def _python_function(doc: dict[str, Any]) -> str:
    lines = [f"# Function: {doc['name']}\n", '    """\n', f"    {doc.get('description', '')}\n\n"]
    properties = doc.get("parameters", {}).get("properties", {})
    if properties:
        lines.append("    Args:\n")
        lines += [_python_param(name, meta, 0) for name, meta in properties.items()]
    lines.append('    """\n')
    return "".join(lines)


def insert_system_prompt(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """Prepend the prompt to an existing leading system message, or insert one."""
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{prompt}\n\n{messages[0]['content']}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": prompt}, *messages]


__all__ = [
    "OPENAPI_TYPES",
    "ToolSchemaError",
    "insert_system_prompt",
    "render_docs",
    "shown_name",
    "system_prompt",
    "to_openai_tools",
    "with_language_hints",
]
