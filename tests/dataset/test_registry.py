"""The leaderboard's model registry, read by static parsing from the release's sources."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_bfcl.dataset.fetch import DatasetError, ensure_pinned_data
from pytest_bfcl.dataset.registry import (
    HANDLER_DIR,
    MODEL_CONFIG_FILE,
    LeaderboardModel,
    load_model_registry,
    lookup,
    method_provider,
    parse_model_registry,
)

FIXTURE = Path(__file__).parents[1] / "data" / "conformance" / "model_config_source.txt"


@pytest.fixture(scope="module")
def pinned_registry() -> dict[str, LeaderboardModel]:
    root = ensure_pinned_data().unpacked_root
    assert root is not None
    return load_model_registry(root)


@pytest.fixture()
def fixture_root(tmp_path: Path) -> Path:
    target = tmp_path / MODEL_CONFIG_FILE
    target.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, target)
    return tmp_path


# -- the pinned release ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "display", "mode", "underscore_to_dot", "handler"),
    [
        ("gpt-4.1-2025-04-14-FC", "GPT-4.1-2025-04-14 (FC)", "fc", True, "OpenAIResponsesHandler"),
        (
            "gpt-4.1-2025-04-14",
            "GPT-4.1-2025-04-14 (Prompt)",
            "prompt",
            False,
            "OpenAIResponsesHandler",
        ),
        ("Qwen/Qwen3-8B-FC", "Qwen3-8B (FC)", "fc", False, "QwenFCHandler"),
        ("Qwen/Qwen3-8B", "Qwen3-8B (Prompt)", "prompt", False, "QwenHandler"),
        ("qwen3-4b-think-FC", "Qwen3-4B-Think (FC)", "fc", True, "QwenAgentThinkHandler"),
        (
            "gorilla-openfunctions-v2",
            "Gorilla-OpenFunctions-v2 (FC)",
            "fc",
            False,
            "GorillaHandler",
        ),
    ],
)
def test_pinned_registry_known_models(
    pinned_registry: dict[str, LeaderboardModel],
    name: str,
    display: str,
    mode: str,
    underscore_to_dot: bool,
    handler: str,
) -> None:
    model = pinned_registry[name]
    assert (model.name, model.display_name, model.mode) == (name, display, mode)
    assert model.underscore_to_dot is underscore_to_dot
    assert model.handler == handler


def test_pinned_registry_size_and_prices(pinned_registry: dict[str, LeaderboardModel]) -> None:
    # 175 ModelConfig entries across the three maps of 2026.3.23, none overridden.
    assert len(pinned_registry) == 175
    gpt = pinned_registry["gpt-4.1-2025-04-14-FC"]
    assert (gpt.input_price, gpt.output_price, gpt.api_model_name) == (2, 8, "gpt-4.1-2025-04-14")
    # The release has no reasoning flag: we say "unknown" rather than guess.
    assert all(model.is_reasoning is None for model in pinned_registry.values())
    assert all(model.extra == {} for model in pinned_registry.values())


def test_pinned_registry_is_cached_per_root(pinned_registry: dict[str, LeaderboardModel]) -> None:
    root = ensure_pinned_data().unpacked_root
    assert root is not None
    assert load_model_registry(root) is pinned_registry


def test_lookup_by_result_dir_name(pinned_registry: dict[str, LeaderboardModel]) -> None:
    model = lookup("Qwen_Qwen3-8B-FC", pinned_registry)
    assert model.name == "Qwen/Qwen3-8B-FC"
    assert model.result_dir_name == "Qwen_Qwen3-8B-FC"


def test_lookup_unknown_name_suggests_closest(pinned_registry: dict[str, LeaderboardModel]) -> None:
    with pytest.raises(
        ValueError, match=r"unknown leaderboard model 'gpt-4\.1-2025-04-14-fc'"
    ) as info:
        lookup("gpt-4.1-2025-04-14-fc", pinned_registry)
    assert "gpt-4.1-2025-04-14-FC" in str(info.value)


def test_lookup_hopeless_name_has_no_suggestions(
    pinned_registry: dict[str, LeaderboardModel],
) -> None:
    with pytest.raises(ValueError) as info:
        lookup("zzzzzzzzzzzzzzzzzzzzzzzz", pinned_registry)
    assert "closest" not in str(info.value)


# -- a hand-written source -----------------------------------------------------------------------


def test_fixture_source_entries_defaults_and_overrides(fixture_root: Path) -> None:
    registry = load_model_registry(fixture_root)
    assert list(registry) == ["alpha-1-FC", "alpha-1", "org/beta-7b-FC"]
    alpha_fc = registry["alpha-1-FC"]
    assert (alpha_fc.mode, alpha_fc.underscore_to_dot, alpha_fc.handler) == (
        "fc",
        True,
        "AlphaHandler",
    )
    assert (alpha_fc.input_price, alpha_fc.output_price) == (1.5, 6)
    # A later map's key wins, as in the evaluator's ``{**a, **b}``; defaults fill the rest.
    alpha = registry["alpha-1"]
    assert (alpha.display_name, alpha.handler, alpha.mode) == (
        "Alpha 1 (Prompt, local)",
        "BetaHandler",
        "prompt",
    )
    assert alpha.underscore_to_dot is False and alpha.input_price is None
    # Attribute handlers, reasoning flags and unknown fields.
    beta = registry["org/beta-7b-FC"]
    assert (beta.handler, beta.mode, beta.is_reasoning) == ("BetaHandler", "fc", True)
    assert beta.extra == {"context_window": 32768}


def test_mapping_without_named_union_merges_every_map() -> None:
    source = FIXTURE.read_text(encoding="utf-8").split("MODEL_CONFIG_MAPPING")[0]
    assert set(parse_model_registry(source)) == {"alpha-1-FC", "alpha-1", "org/beta-7b-FC"}


def test_source_without_registry_is_a_dataset_error() -> None:
    with pytest.raises(DatasetError, match="no ModelConfig mapping"):
        parse_model_registry("X = {'a': 1}\n")


def test_non_literal_argument_is_a_dataset_error() -> None:
    source = "M = {'m': ModelConfig(display_name=make(), model_handler=H)}\n"
    with pytest.raises(DatasetError, match="non-literal"):
        parse_model_registry(source)


def test_missing_module_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="model registry"):
        load_model_registry(tmp_path)


# -- the decoder behind each handler -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "decoder", "decodes_like"),
    [
        ("gpt-4.1-2025-04-14-FC", "OpenAIResponsesHandler", "fc"),
        ("gpt-4.1-2025-04-14", "OpenAIResponsesHandler", "prompt"),
        ("Qwen/Qwen3-8B", "OSSHandler", "prompt"),
        # registered as fc, but the local-model base class decodes text
        ("meta-llama/Llama-3.2-1B-Instruct-FC", "OSSHandler", "prompt"),
        # a decoder of its own: pytest-bfcl's standard decoding may not match
        ("Qwen/Qwen3-8B-FC", "QwenFCHandler", None),
        ("claude-opus-4-5-20251101-FC", "ClaudeHandler", None),
    ],
)
def test_pinned_registry_decoders(
    pinned_registry: dict[str, LeaderboardModel],
    name: str,
    decoder: str,
    decodes_like: str | None,
) -> None:
    model = pinned_registry[name]
    assert (model.decoder, model.decodes_like) == (decoder, decodes_like)


def _write_handlers(root: Path) -> None:
    handlers = root / HANDLER_DIR / "api"
    handlers.mkdir(parents=True)
    (handlers / "alpha.py").write_text(
        "class OpenAICompletionsHandler(BaseHandler):\n"
        "    def decode_ast(self, result, language, tag):\n        return []\n"
        "class AlphaHandler(OpenAICompletionsHandler):\n"
        "    def __init__(self):\n        pass\n",
        encoding="utf-8",
    )
    (handlers / "beta.py").write_text(
        "class BetaHandler(mod.AlphaHandler):\n"
        "    def decode_ast(self, result, language, tag):\n        return []\n",
        encoding="utf-8",
    )


def test_decoder_is_found_through_base_classes(tmp_path: Path) -> None:
    root = tmp_path / "with-handlers"
    target = root / MODEL_CONFIG_FILE
    target.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, target)
    _write_handlers(root)
    registry = load_model_registry(root)
    assert registry["alpha-1-FC"].decoder == "OpenAICompletionsHandler"
    assert registry["alpha-1-FC"].decodes_like == "fc"
    assert registry["org/beta-7b-FC"].decoder == "BetaHandler"
    assert registry["org/beta-7b-FC"].decodes_like is None


def test_decoder_unknown_without_handler_sources(fixture_root: Path) -> None:
    model = load_model_registry(fixture_root)["alpha-1-FC"]
    assert model.decoder is None and model.decodes_like is None


def test_method_provider_stops_at_unknown_bases() -> None:
    classes = {"A": (["B"], set()), "B": (["Outside"], {"decode_ast"}), "C": (["Outside"], set())}
    assert method_provider("A", "decode_ast", classes) == "B"
    assert method_provider("C", "decode_ast", classes) is None
