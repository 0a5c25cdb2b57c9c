"""How many tokens the leaderboard's open-weight handlers ask for: ``max_tokens`` is what the
context window leaves after the prompt, at most 4,096, or 1,000 when the prompt already fills
it (the server refuses such a request anyway). The prompt's tokens are counted with the
checkpoint's own tokenizer (``tokenizer.json`` read by the ``tokenizers`` package), or by the
server (its ``/tokenize`` route); the window is ``config.json``'s ``max_position_embeddings``,
else the tokenizer's ``model_max_length``, as the leaderboard reads them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.files import read_small_text

MAX_NEW_TOKENS = 4096  # the handlers' cap on max_tokens
FULL_CONTEXT_TOKENS = 1000  # what they ask when the prompt leaves no room
MARGIN = 2  # tokens the handlers keep free besides the prompt
# a checkpoint's config.json (or tokenizer_config.json) is small; a file past this is no config
CHECKPOINT_JSON_MAX = 64 << 20


def max_tokens_for(prompt_tokens: int, context: int) -> int:
    """The handlers' ``max_tokens`` for a prompt of ``prompt_tokens`` in a window of
    ``context`` tokens."""
    if context < prompt_tokens + MARGIN:
        return FULL_CONTEXT_TOKENS
    return min(MAX_NEW_TOKENS, context - prompt_tokens - MARGIN)


@dataclass(frozen=True)
class PromptBudget:
    """A token counter and the context window, with where they come from (for the reports)."""

    count: Callable[[str], int]
    context: int
    source: str

    def max_tokens(self, prompt: str) -> int:
        return max_tokens_for(self.count(prompt), self.context)


def checkpoint_json(path: Path) -> dict[str, Any]:
    """A checkpoint's JSON file (config.json, tokenizer_config.json), bounded; a one-line
    ``DatasetError`` for one that cannot be read or is not an object."""
    try:
        data = json.loads(read_small_text(path, CHECKPOINT_JSON_MAX))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path} is not a JSON object")
    return data


def context_window(folder: Path) -> int:
    """The checkpoint's context window as the leaderboard reads it."""
    config = folder / "config.json"
    if config.is_file():
        value = checkpoint_json(config).get("max_position_embeddings")
        if isinstance(value, int) and value > 0:
            return value
    tokenizer_config = folder / "tokenizer_config.json"
    if tokenizer_config.is_file():
        value = checkpoint_json(tokenizer_config).get("model_max_length")
        if isinstance(value, int) and value > 0:
            return value
    raise DatasetError(
        f"{folder} says no context window: config.json has no max_position_embeddings and "
        "tokenizer_config.json no model_max_length"
    )


def reads_tokenizer(folder: Path) -> bool:
    """Whether the folder's ``tokenizer.json`` can count tokens here (it is there, and the
    ``tokenizers`` package is installed)."""
    if not (folder / "tokenizer.json").is_file():
        return False
    import importlib.util

    return importlib.util.find_spec("tokenizers") is not None


def local_budget(folder: Path) -> PromptBudget:
    """Counts with the checkpoint folder's ``tokenizer.json``; ``DatasetError`` (one line)
    when the folder or the ``tokenizers`` package is missing."""
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise DatasetError(f"{folder} holds no tokenizer.json (--bfcl-tokenizer)")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise DatasetError(
            "counting prompt tokens with a tokenizer folder needs the tokenizers package "
            "(pip install 'pytest-bfcl[handlers]'); without --bfcl-tokenizer the server's "
            "/tokenize route counts them"
        ) from None
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the package raises its own exception types
        raise DatasetError(f"cannot read {path}: {exc}") from None
    window = context_window(folder)

    def count(prompt: str) -> int:
        # as the leaderboard's tokenizer.tokenize(): the text's tokens, none added
        return len(tokenizer.encode(prompt, add_special_tokens=False).ids)

    return PromptBudget(count, window, f"tokenizer {folder}")
