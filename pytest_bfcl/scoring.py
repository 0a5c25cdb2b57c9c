"""How a model's raw output is read: the mode and the function-name convention. Shared by
models, checkers and the engine, so it depends on nothing of theirs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["fc", "prompt"]
# Where a thinking model's reasoning is (pytest_bfcl.decode.reasoning): a field of its own, or
# <think> blocks in a text answer too.
Reasoning = Literal["field", "think-tags"]
# How an answer is echoed into a conversation's history (pytest_bfcl.models.leaderboard_wire):
# the message as the server returned it, or rebuilt without its reasoning.
HistoryEcho = Literal["as-returned", "no-reasoning"]
# The leaderboard's default sampling temperature (its ``--temperature``), sent unless the user
# sets one: 0.001, not 0 (some servers read 0 as "the model's default").
REFERENCE_TEMPERATURE = 0.001
# How an endpoint model is asked: chat completions, OpenAI's Responses API (whose answers
# are read the same way once parsed: calls, or text), or the completions route of the
# leaderboard's open-weight handlers (a prompt the handler renders, raw text back).
WireFormat = Literal["chat-completions", "responses", "completions"]


@dataclass(frozen=True)
class ScoringOptions:
    """How a model's raw output is read."""

    mode: Mode = "fc"
    # FC models get tool names with "." replaced by "_" (OpenAI-compatible APIs reject dots).
    underscore_to_dot: bool = True
    # Applied where an endpoint's answer arrives (stored answers are decoded as they are).
    reasoning: Reasoning = "field"
    # The leaderboard handler class whose own decoder reads text answers (the completions
    # route, pytest_bfcl.handlers); None: the mode's decoders.
    handler: str | None = None


# The finish reason stored for an answer cut at --bfcl-max-response-bytes (written by the
# endpoint model, read by the checker that fails such answers).
TRUNCATED = "response_too_large"
# The finish reason stored for a request the server refused as longer than the model's context
# window: the model's failure, as the leaderboard scores it (its handler records the error as
# the answer), never scored by content.
CONTEXT_EXCEEDED = "context_length_exceeded"
CONTEXT_ERROR_TYPE = "request:context_length"  # the verdict's error type for such an entry
# The finish reason stored for a prompt the provider's content filter refused (HTTP 400,
# ``code: "content_filter"``): the model as served gave no answer, a failure as on the
# leaderboard, never scored by content and not cached (the provider's policy may change).
PROMPT_FILTERED = "prompt_filtered"
PROMPT_FILTERED_ERROR_TYPE = "request:content_filter"
# The finish reason of a conversation that outgrew --bfcl-max-entry-bytes: the model's failure.
ENTRY_BUDGET_EXCEEDED = "entry_budget_exceeded"
ENTRY_BUDGET_ERROR_TYPE = "entry:budget_exceeded"

# The version of the verdict rules. Bump it whenever a change of a checker, decoder or
# executor can turn any entry's verdict: baselines record it, and one recorded under other rules
# is refused (its verdicts would not be comparable).
SCORING_RULES_VERSION = 1
