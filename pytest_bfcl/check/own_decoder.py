"""The leaderboard handler's own decoder for a stored answer, on the completions route only:
a run without a handler imports none of the handler modules."""

from __future__ import annotations

from typing import Any


def handler_decoder(handler: str | None, result: Any) -> Any:
    """The handler's own decoder for this result (see ``handlers.decoder_for``), or None."""
    if handler is None:
        return None
    from pytest_bfcl.handlers import decoder_for

    return decoder_for(handler, result)
