"""A checkpoint's own chat template, rendered as the ``transformers`` tokenizer's
``apply_chat_template`` renders it, for the one leaderboard handler that asks its tokenizer
for the prompt (Falcon 3's).

The template is the checkpoint's (``chat_template.jinja``, else ``tokenizer_config.json``'s
``chat_template``), never the project's. It runs in jinja2's immutable sandbox with the
environment ``transformers`` gives it: blocks trimmed and left-stripped, loop controls, its
``tojson`` (no HTML escaping, ``indent`` and friends), ``raise_exception``, ``strftime_now``,
the tokenizer's special tokens (``eos_token``, ...) and ``add_generation_prompt``; messages
with their ``None`` fields dropped and their reasoning under each of its names, as
``transformers`` passes them (its 5.x releases, which the leaderboard's unpinned dependency
resolves to today).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.files import read_small_text
from pytest_bfcl.handlers.tokens import CHECKPOINT_JSON_MAX, checkpoint_json

TEMPLATE_FILE = "chat_template.jinja"
CONFIG_FILE = "tokenizer_config.json"
LEGACY_SPECIAL_FILE = "special_tokens_map.json"
# the names a message's reasoning goes by, the one templates read first
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
# the tokenizer's special tokens a template sees by name
SPECIAL_TOKENS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)


@dataclass(frozen=True)
class ChatTemplate:
    """A checkpoint's template source and the special tokens it is rendered with."""

    source: str
    special_tokens: dict[str, str]
    where: Path

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        """The prompt for ``messages`` with ``tools`` and the assistant's turn opened; a
        template that fails names the checkpoint's file and the failure in one line."""
        template = _compiled(self.source, self.where)
        normalised = [_aliased({k: v for k, v in m.items() if v is not None}) for m in messages]
        try:
            return str(
                template.render(
                    messages=normalised,
                    tools=tools,
                    documents=None,
                    add_generation_prompt=True,
                    **self.special_tokens,
                )
            )
        except Exception as exc:  # the template's own failure (raise_exception, a bad key...)
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DatasetError(f"the chat template of {self.where} failed: {message}") from None


def _aliased(message: dict[str, Any]) -> dict[str, Any]:
    """A message's reasoning under each name templates read it by (``thinking`` first,
    ``reasoning_content`` last), as ``transformers`` passes it."""
    for name in REASONING_FIELDS:
        if message.get(name) is not None:
            reasoning = message[name]
            return {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message


def _token_text(value: Any) -> str | None:
    """A special token as the config writes it: its text, or an added token's ``content``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _special_tokens(folder: Path, config: dict[str, Any]) -> dict[str, str]:
    found: dict[str, Any] = {}
    legacy = folder / LEGACY_SPECIAL_FILE
    if legacy.is_file():
        found.update(checkpoint_json(legacy))
    found.update({k: v for k, v in config.items() if k in SPECIAL_TOKENS})
    tokens = {name: _token_text(found.get(name)) for name in SPECIAL_TOKENS}
    return {name: text for name, text in tokens.items() if text is not None}


def _template_of(config: dict[str, Any], path: Path, tools: bool) -> str:
    """``chat_template`` of a tokenizer config: one template, or named ones (``tool_use``
    when there are tools and it exists, else ``default``), as ``transformers`` picks them."""
    value = config.get("chat_template")
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        named = {item.get("name"): item.get("template") for item in value if isinstance(item, dict)}
        for name in ("tool_use", "default") if tools else ("default",):
            if isinstance(named.get(name), str):
                return str(named[name])
    raise DatasetError(
        f"{path} has no chat_template (and {path.parent / TEMPLATE_FILE} is missing): the "
        "handler renders the checkpoint's own template; point --bfcl-tokenizer at its folder"
    )


def load_chat_template(folder: Path, tools: bool = True) -> ChatTemplate:
    """The chat template of a checkpoint's folder; ``DatasetError`` (one line, naming the
    file) when the folder holds none."""
    config_path = folder / CONFIG_FILE
    if not config_path.is_file():
        raise DatasetError(
            f"{config_path} is missing: the handler renders the checkpoint's own chat template; "
            "point --bfcl-tokenizer at the checkpoint's folder"
        )
    config = checkpoint_json(config_path)
    template_path = folder / TEMPLATE_FILE
    if template_path.is_file():
        try:
            source = read_small_text(template_path, CHECKPOINT_JSON_MAX)
        except (OSError, ValueError) as exc:
            raise DatasetError(f"cannot read {template_path}: {exc}") from None
    else:
        source = _template_of(config, config_path, tools)
    return ChatTemplate(source, _special_tokens(folder, config), folder)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    # transformers' filter: plain json.dumps, no HTML escaping (jinja2's own escapes)
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


_COMPILED: dict[str, Any] = {}


def _compiled(source: str, where: Path) -> Any:
    if source not in _COMPILED:
        environment = _environment()
        try:
            _COMPILED[source] = environment.from_string(source)
        except Exception as exc:  # jinja2's TemplateSyntaxError and kin
            raise DatasetError(f"the chat template of {where} does not parse: {exc}") from None
    return _COMPILED[source]


def _environment() -> Any:
    try:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise DatasetError(
            "rendering the checkpoint's chat template needs the jinja2 package "
            "(pip install 'pytest-bfcl[handlers]')"
        ) from None

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    class Generation(jinja2.ext.Extension):
        """``{% generation %}`` blocks render their body (transformers tracks them)."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(
                lineno
            )

        def _body(self, caller: Callable[[], str]) -> str:
            return caller()

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env
