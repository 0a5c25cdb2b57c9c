"""The route a run asked on is said where a team looks: the leaderboard line of the header, the
stamp a baseline is compared by, and the decoding the checkers apply."""

from __future__ import annotations

from pytest_bfcl.gate.settings_change import setting_differences
from pytest_bfcl.run.leaderboard import as_leaderboard_scores, leaderboard_note, scoring_options
from pytest_bfcl.settings import build_settings


def _settings(data_source, **given):
    values = {"model": "oracle", "leaderboard_model": "Qwen/Qwen3-8B-FC", **given}
    return as_leaderboard_scores(build_settings(values), data_source)


def test_an_open_weight_entry_follows_its_handler_on_the_completions_route(data_source):
    settings = _settings(data_source)
    assert settings.wire_format == "completions" and settings.mode == "fc"
    assert settings.underscore_to_dot is False
    assert scoring_options(settings, data_source).handler == "QwenFCHandler"
    note = leaderboard_note(settings, data_source)
    assert "completions route as its handler QwenFCHandler asks (family qwen-fc)" in note


def test_the_chat_route_for_an_open_weight_entry_says_it_is_not_the_leaderboards(data_source):
    settings = _settings(data_source, wire_format="chat-completions")
    assert scoring_options(settings, data_source).handler is None  # the mode's decoders
    note = leaderboard_note(settings, data_source)
    assert "through the server's chat template" in note
    assert "not the leaderboard's number" in note


def test_an_api_entry_keeps_its_wire_format(data_source):
    settings = as_leaderboard_scores(
        build_settings({"model": "oracle", "leaderboard_model": "gpt-4.1-2025-04-14-FC"}),
        data_source,
    )
    assert settings.wire_format == "responses"
    assert scoring_options(settings, data_source).handler is None


def test_a_baseline_of_another_route_or_family_is_named_as_different():
    chat = {"wire_format": "chat-completions"}
    qwen_fc = {"wire_format": "completions:qwen-fc"}
    qwen = {"wire_format": "completions:qwen"}

    def lines(recorded: dict[str, str], metadata: dict[str, str]) -> list[str]:
        return [d.line for d in setting_differences(recorded, metadata)]

    assert any("wire format differs" in line for line in lines(chat, qwen_fc))
    assert any("wire format differs" in line for line in lines(qwen, qwen_fc))
    assert not any("wire format" in line for line in lines(qwen_fc, dict(qwen_fc)))


def test_the_html_header_names_the_route_and_the_leaderboard_line():
    from pytest_bfcl.report.html.page import render_html
    from pytest_bfcl.scores.board import ScoreBoard

    note = "scored as the leaderboard scores Qwen/Qwen3-8B-FC (...); asked on the completions route"
    metadata = {"model": "m", "wire_format": "completions:qwen-fc", "leaderboard_note": note}
    page = render_html([], {}, ScoreBoard().scores(), None, metadata)
    assert "asked over: <b>completions:qwen-fc</b>" in page
    assert "asked on the completions route" in page


def test_stored_answers_of_an_unreproduced_family_are_still_scored(data_source):
    settings = as_leaderboard_scores(
        build_settings({"model": "replay:results", "leaderboard_model": "qwen3-4b-think-FC"}),
        data_source,
    )
    assert settings.wire_format == "chat-completions"
    assert scoring_options(settings, data_source).handler is None
