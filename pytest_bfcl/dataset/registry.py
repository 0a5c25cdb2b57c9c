"""The leaderboard's model registry, read from the pinned release's sources by static parsing.

The release maps every leaderboard model name (the name given to its ``--model`` option and,
with ``/`` written as ``_``, the name of the model's result directory) to a configuration:
display name, handler class, whether the model runs in function-calling or prompting mode, and
whether dots in function names were replaced by underscores (``underscore_to_dot``), which
changes how the checker matches function names.

The module is parsed with :mod:`ast`: each ``ModelConfig(...)`` constructor call is read as
literal keyword arguments (the handler is a class name, read as its name), the dataclass's own
defaults fill keywords a call leaves out, and the mapping the evaluator uses is rebuilt from
the module-level dicts it splats together. The handler's decoder (which class's ``decode_ast``
the evaluator calls) is found the same way, from the class definitions of the handler modules.
Nothing from the distribution is imported.
"""

from __future__ import annotations

import ast
import difflib
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.files import read_small_text
from pytest_bfcl.scoring import Mode, WireFormat

SOURCE_MAX = 16 << 20  # bytes of one of the release's Python files read as data

MODEL_CONFIG_FILE = "bfcl_eval/constants/model_config.py"
HANDLER_DIR = "bfcl_eval/model_handler"
DECODE_METHOD = "decode_ast"
# The methods that turn a server's response into the stored answer (where reasoning is split
# off): local models always go through the prompting one, API models through their mode's.
PARSE_METHODS = {"prompt": "_parse_query_response_prompting", "fc": "_parse_query_response_FC"}
LOCAL_BASE = "OSSHandler"  # the base class of handlers that run a local model on vLLM/SGLang
# Handler classes whose decoding pytest-bfcl reproduces, and the mode it decodes like: the two
# OpenAI handlers read native calls (``{name: arguments_json}``) in fc mode and text with the
# default prompting decoder otherwise; the local-model base class always decodes text, even
# for a model registered as fc.
COMMON_DECODERS: dict[str, Mode | None] = {
    "OpenAICompletionsHandler": None,  # None: as the model's mode
    "OpenAIResponsesHandler": None,
    "OSSHandler": "prompt",
}
# The handler (and its subclasses) that asks its model through OpenAI's Responses API.
RESPONSES_HANDLER = "OpenAIResponsesHandler"
CONFIG_CLASS = "ModelConfig"
MAPPING_NAME = "MODEL_CONFIG_MAPPING"

# Keywords of the constructor that become named fields; any other literal keyword (a field a
# later release adds) is kept in ``extra`` so that it is at least visible.
_KNOWN_KEYWORDS = frozenset(
    {
        "model_name",
        "display_name",
        "url",
        "org",
        "license",
        "model_handler",
        "input_price",
        "output_price",
        "is_fc_model",
        "underscore_to_dot",
    }
)
# Flags under which a release may mark thinking/reasoning models; 2026.3.23 has none.
_REASONING_KEYWORDS = ("is_reasoning", "is_reasoning_model", "is_thinking", "is_thinking_model")


class LeaderboardModel(BaseModel):
    """One entry of the leaderboard's model registry."""

    model_config = ConfigDict(frozen=True)

    name: str  # the registry key, e.g. "gpt-4.1-2025-04-14-FC"
    display_name: str
    mode: Mode
    underscore_to_dot: bool
    handler: str  # the handler class's name, e.g. "OpenAIResponsesHandler"
    api_model_name: str = ""  # the name the vendor API or Hugging Face uses
    org: str = ""
    license: str = ""
    url: str = ""
    input_price: float | None = None  # USD per million tokens
    output_price: float | None = None
    # None: the release records no reasoning flag (true of 2026.3.23; thinking variants are
    # told apart only by their name and handler there).
    is_reasoning: bool | None = None
    # The handler class (the handler itself or a base) whose ``decode_ast`` the evaluator
    # uses; None when not resolved (a source without the handler modules).
    decoder: str | None = None
    # The handler class whose response parsing applies (it decides whether ``<think>`` blocks
    # are cut out of the text, see :mod:`pytest_bfcl.decode.reasoning`); None when not resolved.
    response_parser: str | None = None
    # The same per mode (a run may choose the mode the model is not registered in).
    response_parser_in: dict[str, str | None] = {}
    # How the leaderboard asks the model: OpenAI's Responses API (its Responses handler),
    # completions with a prompt the handler renders (open-weight models' handlers), or chat
    # completions (every other handler).
    wire_format: WireFormat = "chat-completions"
    extra: dict[str, Any] = {}

    @property
    def decodes_like(self) -> Mode | None:
        """The mode whose standard decoding the evaluator applies to this model's output, or
        None when the model has a decoder of its own (pytest-bfcl's scores may then differ)."""
        if self.decoder not in COMMON_DECODERS:
            return None
        return COMMON_DECODERS[self.decoder] or self.mode

    @property
    def result_dir_name(self) -> str:
        """The directory the evaluator reads this model's results from."""
        return self.name.replace("/", "_")


def _literal(node: ast.expr) -> Any:
    """A keyword's value: a literal, or a bare name (a handler class) as its name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise DatasetError(f"non-literal value in the model registry: {ast.unparse(node)}") from exc


def _is_config_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == CONFIG_CLASS
    )


def _dataclass_defaults(tree: ast.Module) -> dict[str, Any]:
    """Defaults declared on the config dataclass (``is_fc_model: bool = True`` ...)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == CONFIG_CLASS:
            return {
                stmt.target.id: _literal(stmt.value)
                for stmt in node.body
                if isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
            }
    return {}


def _config_from_call(name: str, call: ast.Call, defaults: dict[str, Any]) -> LeaderboardModel:
    if call.args:
        raise DatasetError(f"model registry entry {name!r} uses positional arguments")
    values = dict(defaults)
    values.update({kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg is not None})
    reasoning = next((values[k] for k in _REASONING_KEYWORDS if k in values), None)
    extra = {
        k: v for k, v in values.items() if k not in _KNOWN_KEYWORDS and k not in _REASONING_KEYWORDS
    }
    missing = [k for k in ("display_name", "model_handler") if k not in values]
    if missing:
        raise DatasetError(f"model registry entry {name!r} lacks {', '.join(missing)}")
    return LeaderboardModel(
        name=name,
        display_name=values["display_name"],
        mode="fc" if values.get("is_fc_model", True) else "prompt",
        underscore_to_dot=bool(values.get("underscore_to_dot", False)),
        handler=values["model_handler"],
        api_model_name=values.get("model_name", ""),
        org=values.get("org", ""),
        license=values.get("license", ""),
        url=values.get("url", ""),
        input_price=values.get("input_price"),
        output_price=values.get("output_price"),
        is_reasoning=None if reasoning is None else bool(reasoning),
        wire_format="responses"
        if values["model_handler"] == RESPONSES_HANDLER
        else "chat-completions",
        extra=extra,
    )


def _dict_of_configs(
    node: ast.Dict, defaults: dict[str, Any], known: dict[str, dict[str, LeaderboardModel]]
) -> dict[str, LeaderboardModel] | None:
    """A dict literal of ``name: ModelConfig(...)`` and ``**other_map`` items, in order (later
    keys win, as in Python); None when it holds anything else."""
    out: dict[str, LeaderboardModel] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:  # **splat of an earlier module-level map
            if not isinstance(value, ast.Name) or value.id not in known:
                return None
            out.update(known[value.id])
        elif (
            isinstance(key, ast.Constant) and isinstance(key.value, str) and _is_config_call(value)
        ):
            out[key.value] = _config_from_call(key.value, value, defaults)  # type: ignore[arg-type]
        else:
            return None
    return out


def parse_model_registry(source: str) -> dict[str, LeaderboardModel]:
    """The evaluator's mapping from the text of its model-config module."""
    tree = ast.parse(source)
    defaults = _dataclass_defaults(tree)
    maps: dict[str, dict[str, LeaderboardModel]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)):
            continue
        parsed = _dict_of_configs(node.value, defaults, maps)
        if parsed is None:
            continue
        for target in node.targets:
            if isinstance(target, ast.Name):
                maps[target.id] = parsed
    if MAPPING_NAME in maps:
        return maps[MAPPING_NAME]
    if not maps:
        raise DatasetError(f"no {CONFIG_CLASS} mapping found in the model registry source")
    merged: dict[str, LeaderboardModel] = {}
    for parsed in maps.values():  # no named mapping: every map, in source order
        merged.update(parsed)
    return merged


def _handler_classes(handler_dir: Path) -> dict[str, tuple[list[str], set[str]]]:
    """Class name -> (base names, method names) for every handler module."""
    classes: dict[str, tuple[list[str], set[str]]] = {}
    for path in sorted(handler_dir.rglob("*.py")):
        for node in ast.parse(read_small_text(path, SOURCE_MAX)).body:
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
                methods = {
                    item.name
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                }
                classes[node.name] = (bases, methods)
    return classes


def method_provider(
    class_name: str, method: str, classes: dict[str, tuple[list[str], set[str]]]
) -> str | None:
    """The class that defines ``method`` for ``class_name``: itself or the first base, breadth
    first (the handlers use single inheritance)."""
    queue, seen = [class_name], set()
    while queue:
        name = queue.pop(0)
        if name in seen or name not in classes:
            continue
        seen.add(name)
        bases, methods = classes[name]
        if method in methods:
            return name
        queue.extend(bases)
    return None


@cache
def _load_cached(path: Path, handler_dir: Path) -> dict[str, LeaderboardModel]:
    registry = parse_model_registry(read_small_text(path, SOURCE_MAX))
    if not handler_dir.is_dir():
        return registry
    classes = _handler_classes(handler_dir)
    return {
        name: model.model_copy(
            update={
                "decoder": method_provider(model.handler, DECODE_METHOD, classes),
                "response_parser": _response_parser(model, classes),
                "response_parser_in": {
                    mode: _response_parser(model.model_copy(update={"mode": mode}), classes)
                    for mode in PARSE_METHODS
                },
                "wire_format": _wire_format(model, classes),
            }
        )
        for name, model in registry.items()
    }


def _response_parser(
    model: LeaderboardModel, classes: dict[str, tuple[list[str], set[str]]]
) -> str | None:
    mode = "prompt" if descends_from(model.handler, LOCAL_BASE, classes) else model.mode
    return method_provider(model.handler, PARSE_METHODS[mode], classes)


def _wire_format(
    model: LeaderboardModel, classes: dict[str, tuple[list[str], set[str]]]
) -> WireFormat:
    if descends_from(model.handler, LOCAL_BASE, classes):
        return "completions"  # an open-weight model: a prompt its handler renders
    return (
        "responses"
        if descends_from(model.handler, RESPONSES_HANDLER, classes)
        else model.wire_format
    )


def descends_from(
    class_name: str, base: str, classes: dict[str, tuple[list[str], set[str]]]
) -> bool:
    """Whether ``class_name`` is ``base`` or has it among its (known) ancestors."""
    queue, seen = [class_name], set()
    while queue:
        name = queue.pop(0)
        if name == base:
            return True
        if name in seen or name not in classes:
            continue
        seen.add(name)
        queue.extend(classes[name][0])
    return False


def load_model_registry(unpacked_root: Path) -> dict[str, LeaderboardModel]:
    """The pinned release's model registry, parsed once per unpacked root.

    ``unpacked_root`` is ``DataSource.unpacked_root`` (the directory holding ``bfcl_eval/``).
    The returned dict is shared between callers: do not modify it.
    """
    root = Path(unpacked_root).resolve()
    path = root / MODEL_CONFIG_FILE
    if not path.is_file():
        raise DatasetError(f"the model registry {MODEL_CONFIG_FILE} is not under {unpacked_root}")
    return _load_cached(path, root / HANDLER_DIR)


def lookup(name: str, registry: dict[str, LeaderboardModel]) -> LeaderboardModel:
    """The registry entry for a leaderboard model name.

    A result-directory name (``/`` written as ``_``) is accepted too, resolved the way the
    evaluator does: the name as given, else with every ``_`` read back as ``/``. An unknown
    name raises ``ValueError`` naming the closest registry names.
    """
    if name in registry:
        return registry[name]
    slashed = name.replace("_", "/")
    if slashed in registry:
        return registry[slashed]
    by_dir = {model.result_dir_name: model for model in registry.values()}
    if name in by_dir:
        return by_dir[name]
    close = difflib.get_close_matches(name, list(registry), n=5, cutoff=0.5)
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise ValueError(f"unknown leaderboard model {name!r}{hint}")
