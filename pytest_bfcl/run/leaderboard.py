"""Scoring as the leaderboard scores a registered model (``--bfcl-leaderboard-model NAME``):
the registry of the pinned release (read with ``ast``, never imported) says whether the model
is scored as function calling or prompting, whether its function names have dots replaced,
and (through its handler) whether ``<think>`` blocks are cut out of its text answers and
which wire format it is asked in (chat completions or the Responses API). Options
given explicitly win over the registry."""

from __future__ import annotations

from pathlib import Path

from pytest_bfcl.dataset.fetch import DataSource, ensure_pinned_data
from pytest_bfcl.dataset.registry import LeaderboardModel, load_model_registry, lookup
from pytest_bfcl.decode.reasoning import reasoning_mode_of
from pytest_bfcl.models.leaderboard_wire import history_echo_of
from pytest_bfcl.scoring import ScoringOptions, WireFormat
from pytest_bfcl.settings import Settings


def registered_model(settings: Settings, source: DataSource) -> LeaderboardModel:
    """The registry entry of ``--bfcl-leaderboard-model`` (``ValueError`` names the closest
    names for an unknown one)."""
    assert settings.leaderboard_model
    return lookup(settings.leaderboard_model, load_model_registry(_sources_root(source)))


def _sources_root(source: DataSource) -> Path:
    # --bfcl-data may point at data without the release's sources; the registry is read from
    # the pinned release then.
    root = source.unpacked_root or ensure_pinned_data().unpacked_root
    assert root is not None
    return root


def as_leaderboard_scores(settings: Settings, source: DataSource) -> Settings:
    """The settings with the model's mode, name convention and reasoning mode, where not
    given explicitly. The mode is the one whose decoding the leaderboard applies to the model's
    output (a few models registered as function calling are decoded as text)."""
    model = registered_model(settings, source)
    given = settings.model_fields_set
    mode = settings.mode if "mode" in given else (model.decodes_like or model.mode)
    underscore = settings.underscore_to_dot
    if "underscore_to_dot" not in given:
        underscore = model.underscore_to_dot if mode == "fc" else False
    reasoning = settings.reasoning
    if "reasoning" not in given:
        reasoning = reasoning_mode_of(model.response_parser)
    echo = settings.history_echo
    if "history_echo" not in given:
        echo = history_echo_of(_parser_in_mode(model, mode))
    wire = settings.wire_format if "wire_format" in given else model.wire_format
    if wire == "completions":
        wire = _completions_route(model, settings)
    return settings.model_copy(
        update={
            "mode": mode,
            "underscore_to_dot": underscore,
            "reasoning": reasoning,
            "history_echo": echo,
            "wire_format": wire,
        }
    )


def _completions_route(model: LeaderboardModel, settings: Settings) -> WireFormat:
    """The wire format of an open-weight entry: its handler's completions route where a family
    reproduces it; refused otherwise, unless nothing is asked (stored answers, the oracle)."""
    from pytest_bfcl.handlers import family_class, unsupported  # the handler route only

    if family_class(model.handler) is not None:
        return "completions"
    if _asks_nothing(settings):
        return "chat-completions"  # stored answers (replay) or the oracle: no request to make
    raise ValueError(
        f"--bfcl-leaderboard-model={model.name}: {unsupported(model.handler)}; or ask "
        "through the server's chat template with --bfcl-wire-format=chat-completions"
    )


def _asks_nothing(settings: Settings) -> bool:
    """Whether the run's model sends no request (the oracle, stored answers)."""
    return settings.model.startswith(("oracle", "replay:"))


def route_handler(settings: Settings, source: DataSource) -> str | None:
    """The leaderboard handler class whose prompts and decoder the run uses (the completions
    route), or None (chat completions, the Responses API, no leaderboard model)."""
    if not settings.leaderboard_model or settings.wire_format != "completions":
        return None
    return registered_model(settings, source).handler


def scoring_options(settings: Settings, source: DataSource) -> ScoringOptions:
    """How the run reads a model's output: its mode, name convention, reasoning, and the
    leaderboard handler whose decoder reads text answers on the completions route."""
    handler = route_handler(settings, source)
    return ScoringOptions(settings.mode, settings.underscore_to_dot, settings.reasoning, handler)


def _parser_in_mode(model: LeaderboardModel, mode: str) -> str | None:
    """The class that parses the model's responses in the mode the run uses (the registry
    resolves it for the model's own mode; a mode given explicitly may be the other one)."""
    if mode == model.mode:
        return model.response_parser
    return model.response_parser_in.get(mode, model.response_parser)


def sent_model_name(settings: Settings, source: DataSource) -> str:
    """The model name the leaderboard's handler sends for ``--bfcl-leaderboard-model`` (what
    its request rules look at), else the one the run sends."""
    if not settings.leaderboard_model:
        return settings.model
    return registered_model(settings, source).api_model_name or settings.model


def deviations(settings: Settings) -> list[str]:
    """What the run deliberately does otherwise than the leaderboard (a reference bug
    corrected on request): each makes its scores not comparable with the leaderboard's, and
    the reports and the baseline stamp say so."""
    found = []
    if settings.exact_call_text:
        found.append(
            "--bfcl-exact-call-text (text arguments kept as written; the leaderboard rewrites "
            "them before storing)"
        )
    return found


def leaderboard_note(settings: Settings, source: DataSource) -> str:
    """One line for the reports: the model followed, and whether its scores can match."""
    model = registered_model(settings, source)
    convention = "on" if settings.underscore_to_dot else "off"
    note = (
        f"scored as the leaderboard scores {model.name} ({settings.mode} mode, "
        f"underscore_to_dot {convention}, reasoning {settings.reasoning}, history echo "
        f"{settings.history_echo})"
    )
    if settings.wire_format == "completions":
        from pytest_bfcl.handlers import family_class

        family = family_class(model.handler)
        note += (
            f"; asked on the completions route as its handler {model.handler} asks "
            f"(family {family.name if family else '?'}): the handler's prompt, max_tokens rule "
            "and decoder"
        )
    elif model.wire_format == "completions":
        note += (
            f"; asked through the server's chat template (--bfcl-wire-format="
            f"{settings.wire_format}), not as the leaderboard asks this open-weight model "
            f"(its handler {model.handler} on /v1/completions): a regression signal between "
            "runs, not the leaderboard's number"
        )
    elif model.decodes_like is None:
        note += (
            f"; the leaderboard decodes its output with its own decoder ({model.decoder}), "
            "which is not reproduced, so scores may differ"
        )
    return note
