"""The leaderboard's open-weight handlers, one module per family behind one interface
(:class:`~pytest_bfcl.handlers.base.Family`): how the leaderboard renders an open-weight
model's prompt for ``/v1/completions``, what it sends besides, and how it reads the raw
answer back. ``family_for`` names the family of a handler class; any other local handler is
refused in one line that names the families that work (:func:`unsupported`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_bfcl.handlers.arch import ArchFamily
from pytest_bfcl.handlers.base import Decoder, Family, RawAnswer
from pytest_bfcl.handlers.chatml import BielikFamily, MiniCPMFamily
from pytest_bfcl.handlers.deepseek import DeepseekReasoningFamily
from pytest_bfcl.handlers.falcon import Falcon3Family
from pytest_bfcl.handlers.functiongemma import FunctionGemmaFamily
from pytest_bfcl.handlers.gemma import GemmaFamily
from pytest_bfcl.handlers.glm import GLMFamily
from pytest_bfcl.handlers.granite import Granite3Family
from pytest_bfcl.handlers.granite4 import Granite4Family
from pytest_bfcl.handlers.granite_fc import GraniteFCFamily
from pytest_bfcl.handlers.hammer import HammerFamily
from pytest_bfcl.handlers.llama import Llama31Family, LlamaFamily
from pytest_bfcl.handlers.mistral import MistralFCFamily
from pytest_bfcl.handlers.nanbeige import NanbeigeFCFamily
from pytest_bfcl.handlers.pelican import PelicanVLFCFamily
from pytest_bfcl.handlers.phi import PhiFamily
from pytest_bfcl.handlers.phi_fc import PhiFCFamily
from pytest_bfcl.handlers.qwen import QwenFamily, QwenFCFamily
from pytest_bfcl.handlers.think_agent import ThinkAgentFamily
from pytest_bfcl.handlers.xlam import BitAgentFamily, XlamLlamaFamily, XlamQwenFamily

FAMILIES: tuple[type[Family], ...] = (
    QwenFamily,
    QwenFCFamily,
    LlamaFamily,
    Llama31Family,
    PhiFamily,
    GemmaFamily,
    HammerFamily,
    XlamLlamaFamily,
    XlamQwenFamily,
    ArchFamily,
    Granite3Family,
    # Falcon 3, Granite 4, Granite function calling, Phi FC and FunctionGemma
    Falcon3Family,
    Granite4Family,
    GraniteFCFamily,
    PhiFCFamily,
    FunctionGemmaFamily,
    # GLM, ChatML, Mistral, DeepSeek-R1, BitAgent, ThinkAgent, Pelican-VL, Nanbeige
    GLMFamily,
    MiniCPMFamily,
    BielikFamily,
    MistralFCFamily,
    DeepseekReasoningFamily,
    BitAgentFamily,
    ThinkAgentFamily,
    PelicanVLFCFamily,
    NanbeigeFCFamily,
)
_BY_HANDLER = {handler: family for family in FAMILIES for handler in family.handlers}


def supported_handlers() -> tuple[str, ...]:
    """The handler classes whose requests and decoding pytest-bfcl reproduces."""
    return tuple(_BY_HANDLER)


def family_class(handler: str) -> type[Family] | None:
    return _BY_HANDLER.get(handler)


def family_for(
    handler: str, root: Path, model_name: str = "", checkpoint: Path | None = None
) -> Family:
    """The family of a leaderboard handler class; ``LookupError`` (one line) for others,
    ``DatasetError`` (one line) where the family needs what the checkpoint's folder lacks."""
    family = _BY_HANDLER.get(handler)
    if family is None:
        raise LookupError(unsupported(handler))
    return family(root, model_name, checkpoint)


def decoder_for(handler: str | None, result: Any = "") -> Decoder | None:
    """The handler's own decoder for a stored result, or None where the mode's decoders read
    it: a handler that decodes as the common prompting decoders do, no handler, or a result
    of another shape than the handler stores (the oracle's native calls, say)."""
    family = _BY_HANDLER.get(handler or "")
    if family is None or not family.decoder.own:
        return None
    return family.decoder if isinstance(result, str) or family.decoder.structured else None


def unsupported(handler: str) -> str:
    names = ", ".join(sorted(_BY_HANDLER))
    return (
        f"the leaderboard's handler {handler} is not reproduced on the completions route; "
        f"the families that are: {names}"
    )


__all__ = [
    "FAMILIES",
    "Decoder",
    "Family",
    "RawAnswer",
    "decoder_for",
    "family_class",
    "family_for",
    "supported_handlers",
    "unsupported",
]
