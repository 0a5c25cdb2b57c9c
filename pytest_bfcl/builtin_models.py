"""The built-in models, registered through the same hook a project's own handlers use."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_bfcl.names import hookimpl

if TYPE_CHECKING:
    from pytest_bfcl.dataset.fetch import DataSource
    from pytest_bfcl.dataset.texts import ProtocolTexts
    from pytest_bfcl.handlers.tokens import PromptBudget
    from pytest_bfcl.models.base import Model
    from pytest_bfcl.models.cache import ResponseCache
    from pytest_bfcl.models.endpoint_request import EndpointSettings
    from pytest_bfcl.scoring import ScoringOptions
    from pytest_bfcl.settings import Settings


@hookimpl(trylast=True)
def pytest_bfcl_make_model(
    spec: str,
    settings: Settings | None,
    scoring: ScoringOptions,
    source: DataSource | None,
    hook: Any,
) -> Model | None:
    """``oracle``, ``replay:DIR``, ``vllm:MODEL_OR_PATH`` (a server the plugin starts), or the
    name of a model served by an OpenAI-compatible endpoint (``--bfcl-base-url``, or a server
    the plugin starts from ``--bfcl-server-cmd``)."""
    # Imported here: this module is registered in every pytest run, model or not.
    from pytest_bfcl.models.base import ModelSpecError

    if spec == "oracle" or spec.startswith("oracle:"):
        from pytest_bfcl.models.oracle import Flakiness, OracleModel

        try:
            flakiness = Flakiness.parse(spec.removeprefix("oracle").removeprefix(":"))
        except ValueError as exc:
            raise ModelSpecError(f"--bfcl-model={spec}: {exc}") from None
        return OracleModel(scoring, flakiness)
    if spec.startswith("replay:"):
        directory = spec.removeprefix("replay:")
        if not directory:
            raise ModelSpecError("replay needs a directory: --bfcl-model=replay:DIR")
        from pytest_bfcl.models.replay import ReplayModel

        if settings is None:
            return ReplayModel(Path(directory), scoring)
        # a stored line holds a conversation at most (twice: result and log), escaped
        return ReplayModel(
            Path(directory),
            scoring,
            settings.samples,
            max_line_bytes=4 * settings.max_entry_bytes,
        )
    mistake = builtin_name_mistake(spec, endpoint_given=_endpoint_given(settings))
    if mistake:
        raise ModelSpecError(mistake)
    if settings is None or source is None:
        raise ModelSpecError(f"unknown model {spec!r}: use 'oracle' or 'replay:DIR'")
    if source.unpacked_root is None:
        raise ModelSpecError(
            "real models need the benchmark's prompt texts, which are read from the pinned "
            "release; use it (no --bfcl-data) or point --bfcl-data at an unpacked bfcl-eval root"
        )
    return _endpoint_model(spec, settings, scoring, source, hook)


# Built-in model names and prefixes, matched exactly (lower case).
BUILTIN_NAMES = ("oracle",)
BUILTIN_PREFIXES = ("oracle:", "replay:", "vllm:")


def builtin_name_mistake(spec: str, endpoint_given: bool) -> str | None:
    """Why a model name that is not a built-in one looks like a mistyped built-in: the same
    name in other case (``Oracle``, ``Replay:dir``) always, since no endpoint would be meant;
    a near spelling (``orcale``) when no endpoint was given to serve a model of that name."""
    if spec in BUILTIN_NAMES or spec.startswith(BUILTIN_PREFIXES):
        return None
    lowered = spec.lower()
    for name in BUILTIN_NAMES:
        if lowered == name:
            return _did_you_mean(spec, name, "built-in model names are lower case")
    for prefix in BUILTIN_PREFIXES:
        if lowered.startswith(prefix):
            fixed = prefix + spec[len(prefix) :]
            return _did_you_mean(spec, fixed, "built-in model prefixes are lower case")
    bare = {"replay": "replay:DIR", "vllm": "vllm:MODEL_OR_PATH"}
    if lowered in bare:
        return _did_you_mean(spec, bare[lowered], f"{lowered} needs what it serves after ':'")
    if endpoint_given:
        return None
    import difflib  # only on this path

    head, colon, _ = lowered.partition(":")
    words = [p.removesuffix(":") for p in BUILTIN_PREFIXES] if colon else list(BUILTIN_NAMES)
    # a typo changes a letter or two; a longer name (oracle-7b) is another model's
    words = [w for w in words if abs(len(w) - len(head)) <= 1]
    close = difflib.get_close_matches(head, words, n=1, cutoff=0.75)
    if not close:
        return None
    fixed = f"{close[0]}:{spec.partition(':')[2]}" if colon else close[0]
    return _did_you_mean(
        spec,
        fixed,
        "no built-in model has this name, and no endpoint was given to serve it "
        "(--bfcl-base-url, --bfcl-server-cmd or $OPENAI_BASE_URL)",
    )


def _did_you_mean(spec: str, fixed: str, why: str) -> str:
    return f"--bfcl-model={spec}: {why}; did you mean --bfcl-model={fixed}?"


def _endpoint_given(settings: Settings | None) -> bool:
    """Whether the run names a server for an endpoint model."""
    import os

    if settings is None:
        return False
    return bool(settings.base_urls or settings.server_cmd or os.environ.get("OPENAI_BASE_URL"))


def _endpoint_model(
    spec: str, settings: Settings, scoring: ScoringOptions, source: DataSource, hook: Any
) -> Model:
    from pytest_bfcl.dataset.texts import load_texts
    from pytest_bfcl.models.cache import ResponseCache
    from pytest_bfcl.models.openai_chat import EndpointSettings, OpenAIChatModel
    from pytest_bfcl.servers.serving_inputs import served_identity
    from pytest_bfcl.servers.vllm_server import make_vllm_model

    cache = None
    if not settings.no_cache:
        cache = ResponseCache(
            settings.cache_dir or Path(".bfcl-cache"),
            refresh=settings.refresh,
            max_bytes=12 * max(settings.max_response_bytes, 8 * 2**20) + 2**16,
        )
    assert source.unpacked_root is not None
    texts = load_texts(source.unpacked_root)
    if settings.wire_format == "responses" and (settings.server_cmd or spec.startswith("vllm:")):
        from pytest_bfcl.models.base import ModelSpecError

        raise ModelSpecError(
            "the Responses API (--bfcl-wire-format=responses, or the leaderboard model's) is "
            "for endpoints given by --bfcl-base-url or $OPENAI_BASE_URL; a server the plugin "
            "starts is asked over chat completions: add --bfcl-wire-format=chat-completions"
        )
    if settings.wire_format == "completions":
        return _completions_model(spec, settings, scoring, texts, source, cache, hook)
    if settings.server_cmd:
        from pytest_bfcl.servers.server_cmd import make_served_model

        return make_served_model(spec, settings, scoring, texts, cache, hook)
    if spec.startswith("vllm:"):
        return make_vllm_model(spec, settings, scoring, texts, cache, hook)
    # A remote model is known by its name, its revision (when one is given) and the
    # project's extra identity: nothing of its weights can be read from here.
    identity = served_identity("", {}, settings.model_revision, settings.model_identity)
    endpoint = EndpointSettings.from_settings(settings, spec, settings.base_urls, identity)
    if settings.wire_format == "responses":
        return _responses_model(endpoint, settings, scoring, texts, source, cache, hook)
    return OpenAIChatModel(endpoint, scoring, texts, cache, hook)


def _responses_model(
    endpoint: EndpointSettings,
    settings: Settings,
    scoring: ScoringOptions,
    texts: ProtocolTexts,
    source: DataSource,
    cache: ResponseCache | None,
    hook: Any,
) -> Model:
    from pytest_bfcl.models.base import ModelSpecError
    from pytest_bfcl.models.openai_responses import OpenAIResponsesModel
    from pytest_bfcl.models.responses_request import is_reasoning_family

    if settings.sampling_seed is not None:
        raise ModelSpecError(
            "--bfcl-sampling-seed: the Responses API takes no seed; leave it out, or use "
            "--bfcl-wire-format=chat-completions"
        )
    reasoning = is_reasoning_family(_sent_model_name(settings, source))
    return OpenAIResponsesModel(endpoint, scoring, texts, reasoning, cache, hook)


def _completions_model(
    spec: str,
    settings: Settings,
    scoring: ScoringOptions,
    texts: ProtocolTexts,
    source: DataSource,
    cache: ResponseCache | None,
    hook: Any,
) -> Model:
    """The completions route: the leaderboard handler's family of ``--bfcl-leaderboard-model``
    renders every prompt (:mod:`pytest_bfcl.handlers`), on a base URL or on the servers the
    plugin starts (``vllm:``, ``--bfcl-server-cmd``)."""
    from pytest_bfcl.dataset.fetch import DatasetError
    from pytest_bfcl.dataset.registry import load_model_registry, lookup
    from pytest_bfcl.handlers import family_for
    from pytest_bfcl.models.base import ModelSpecError
    from pytest_bfcl.models.completions import CompletionsModel, HandlerRoute
    from pytest_bfcl.models.openai_chat import EndpointSettings

    if not settings.leaderboard_model or source.unpacked_root is None:
        raise ModelSpecError(
            "--bfcl-wire-format=completions asks as a leaderboard handler does: name its entry "
            "with --bfcl-leaderboard-model"
        )
    registered = lookup(settings.leaderboard_model, load_model_registry(source.unpacked_root))
    try:
        family = family_for(
            registered.handler,
            source.unpacked_root,
            registered.api_model_name or registered.name,
            settings.tokenizer or _served_folder(spec),
        )
        budget = _prompt_budget(spec, settings)
    except (LookupError, DatasetError) as exc:
        raise ModelSpecError(str(exc).strip("'\"")) from None
    route = HandlerRoute(family, budget)
    if settings.server_cmd:
        from pytest_bfcl.servers.server_cmd import make_served_model

        return make_served_model(spec, settings, scoring, texts, cache, hook, route)
    if spec.startswith("vllm:"):
        from pytest_bfcl.servers.vllm_server import make_vllm_model

        return make_vllm_model(spec, settings, scoring, texts, cache, hook, route)
    endpoint = EndpointSettings.from_settings(
        settings, spec, settings.base_urls, settings.model_identity
    )
    return CompletionsModel(endpoint, scoring, texts, family, budget, cache, hook)


def _prompt_budget(spec: str, settings: Settings) -> PromptBudget | None:
    """What counts the prompt's tokens on the completions route: ``--bfcl-tokenizer``'s folder;
    else the checkpoint folder ``vllm:PATH`` serves, when it holds a ``tokenizer.json`` and the
    ``tokenizers`` package is installed; else None (the server's ``/tokenize``)."""
    from pytest_bfcl.handlers.tokens import local_budget, reads_tokenizer

    if settings.tokenizer:
        return local_budget(settings.tokenizer)
    folder = _served_folder(spec)
    if folder is not None and reads_tokenizer(folder):
        return local_budget(folder)
    return None


def _served_folder(spec: str) -> Path | None:
    """The checkpoint folder ``vllm:PATH`` serves (its tokenizer and, for a family that renders
    with the checkpoint's chat template, that template); None for a hub name or another spec."""
    folder = Path(spec.removeprefix("vllm:")).expanduser() if spec.startswith("vllm:") else None
    return folder if folder is not None and folder.is_dir() else None


def _sent_model_name(settings: Settings, source: DataSource) -> str:
    """The model name the leaderboard's handler sends for ``--bfcl-leaderboard-model`` (what
    its request rules look at), else the one the run sends."""
    if not settings.leaderboard_model or source.unpacked_root is None:
        return settings.model
    from pytest_bfcl.dataset.registry import load_model_registry, lookup

    registered = lookup(settings.leaderboard_model, load_model_registry(source.unpacked_root))
    return registered.api_model_name or settings.model
