"""Signed baselines, for teams whose baseline lives where a pull request can edit it.

A baseline's digest catches accidents (a file cut short, edited by hand, merged badly), not a
forger: anyone who can edit the file can recompute it. With ``--bfcl-baseline-key VAR`` (the
key itself in the environment variable ``VAR``, a CI secret a pull request cannot read) a
saved baseline carries an HMAC-SHA256 of everything in it, and a baseline compared with is
refused unless its signature matches: a changed verdict, total, stamp or model needs the key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from typing import Any

SIGNATURE_FIELD = "signature"
ALGORITHM = "hmac-sha256"
_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")
MIN_KEY_LENGTH = 16  # a shorter key can be guessed; refused rather than trusted


class SignatureError(ValueError):
    """A signing key that cannot be used (its variable unset or the key too short)."""


def signing_key(env_name: str | None, option: str = "--bfcl-baseline-key") -> bytes | None:
    """The key in the environment variable ``env_name`` (which ``option`` named); ``None``
    when none is named."""
    if not env_name:
        return None
    value = os.environ.get(env_name, "")
    if not value:
        raise SignatureError(
            f"{option} names ${env_name}, which is not set (set it to the "
            "baseline signing key, a CI secret)"
        )
    if len(value) < MIN_KEY_LENGTH:
        raise SignatureError(
            f"the baseline signing key in ${env_name} is shorter than {MIN_KEY_LENGTH} "
            "characters; use a longer random key"
        )
    return value.encode("utf-8")


def _canonical(data: dict[str, Any]) -> bytes:
    unsigned = {k: v for k, v in data.items() if k != SIGNATURE_FIELD}
    text = json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.encode("ascii")


def _mac(data: dict[str, Any], key: bytes) -> str:
    return hmac.new(key, _canonical(data), hashlib.sha256).hexdigest()


def signed(data: dict[str, Any], key: bytes | None) -> dict[str, Any]:
    """The baseline's JSON with its signature (unchanged without a key)."""
    if key is None:
        return data
    return {**data, SIGNATURE_FIELD: {"algorithm": ALGORITHM, "value": _mac(data, key)}}


def signature_problems(raw: dict[str, Any], key: bytes | None) -> list[str]:
    """Why a baseline's signature does not vouch for it, when a key is given."""
    if key is None:
        return []
    signature = raw.get(SIGNATURE_FIELD)
    if not isinstance(signature, dict) or not isinstance(signature.get("value"), str):
        return ["it is not signed, and --bfcl-baseline-key asks for a signed baseline"]
    if signature.get("algorithm") != ALGORITHM:
        return [f"its signature is {ascii(signature.get('algorithm'))[:80]}, not {ALGORITHM!r}"]
    # (compare_digest refuses text that is not ASCII with a TypeError: a hand-edited file)
    if not _HEX_DIGEST.fullmatch(signature["value"]):
        return ["its signature is not a hex digest (changed after it was signed)"]
    if not hmac.compare_digest(signature["value"], _mac(raw, key)):
        return [
            "its signature does not match (changed after it was signed, or signed with another key)"
        ]
    return []
