"""The request and serving settings a run's verdicts depend on (the sampling temperature, the
token limit, the extra request fields, the wire format, the history the handler sends back),
as they differ between a baseline and a run.

A difference nobody declared makes the baseline unfit: the verdicts answer other requests. A
pull request that changes one on purpose declares it (``--bfcl-settings-change=max_tokens``,
or ``bfcl_settings_change`` in the ini file); the gate then compares with the baseline as
usual, and every report says which settings differ and that the comparison measures their
effect.

The extra body's digest (what tells two masked secrets apart) is a salted, stretched hash:
it says whether the same fields were sent, without giving back a guessable key by brute force.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DECLARE_HOW = (
    "declare a deliberate change with --bfcl-settings-change={names} (bfcl_settings_change in "
    "the ini file; docs/model-repo.md, 'Changing serving or request settings')"
)

# Stretching makes each guess of a masked value cost this many hashes.
DIGEST_ITERATIONS = 200_000
DIGEST_SCHEME = "pbkdf2-sha256"


@dataclass(frozen=True)
class SettingDifference:
    name: str  # one of DECLARABLE_SETTINGS
    line: str  # what differs, for the reports


def setting_differences(
    recorded: dict[str, Any], metadata: dict[str, Any], extra: dict[str, Any] | None = None
) -> list[SettingDifference]:
    """How the run's request settings differ from the baseline's. ``extra``: the run's extra
    request fields unmasked, to check the baseline's digest of its own (without them, two
    masked values alike are taken as the same)."""
    found = []
    if "temperature" in recorded and recorded.get("temperature") != metadata.get("temperature"):
        was, now = recorded.get("temperature"), metadata.get("temperature")
        # one of them sent no requests (oracle, replay): another model, nothing to declare
        name = "temperature" if None not in (was, now) else "requests"
        found.append(
            SettingDifference(
                name,
                f"temperature differs: baseline {_temperature(was)}, this run {_temperature(now)}",
            )
        )
    before, now_format = wire_format_of(recorded), wire_format_of(metadata)
    if before and now_format and before != now_format:
        found.append(
            SettingDifference(
                "wire_format",
                f"wire format differs: baseline {before}, this run {now_format} "
                "(--bfcl-wire-format: another API's answers are other answers)",
            )
        )
    for setting, option in (
        ("max_tokens", "--bfcl-max-tokens"),
        ("history_echo", "--bfcl-history-echo"),
    ):
        found += _request_setting_difference(recorded, metadata, setting, option)
    return found + _extra_body_difference(recorded, metadata, extra)


def undeclared(differences: Iterable[SettingDifference], declared: Iterable[str]) -> list[str]:
    """The lines of the differences not declared."""
    allowed = set(declared)
    return [d.line for d in differences if d.name not in allowed]


def refusal_hint(differences: Iterable[SettingDifference], declared: Iterable[str]) -> str:
    """How to declare the undeclared differences, for the refusal's one line."""
    allowed = set(declared)
    names = sorted({d.name for d in differences if d.name not in allowed} | allowed)
    return DECLARE_HOW.format(names=",".join(names)) if names else ""


def measured_note(differences: list[SettingDifference]) -> str:
    """The reports' line on a declared change: which settings differ, and what is measured."""
    return (
        "settings differ from the baseline (declared): "
        + "; ".join(d.line for d in differences)
        + ". The comparison measures their effect."
    )


def _temperature(value: Any) -> str:
    # None: the run sent no requests (oracle, replay: a baseline that fits no served model)
    return "none (a model that asks no endpoint: oracle, replay)" if value is None else repr(value)


# Model kinds that speak chat completions, for baselines recorded before the wire format was
# stamped (a Responses run's model_info said so already).
_CHAT_KINDS = ("openai-compatible", "vllm", "started-server")
_UNSTAMPED = object()  # recorded before the setting was (or by a model that sends none)


def wire_format_of(metadata: dict[str, Any]) -> str | None:
    """The API a run's requests went over; None for models that send none (oracle, replay)."""
    info = metadata.get("model_info")
    info = info if isinstance(info, dict) else {}
    stamped = metadata.get("wire_format") or info.get("wire_format")
    if stamped:
        return str(stamped)
    return "chat-completions" if info.get("kind") in _CHAT_KINDS else None


def _request_setting(metadata: dict[str, Any], name: str) -> Any:
    info = metadata.get("model_info")
    info = info if isinstance(info, dict) else {}
    where = info.get("sampling") if name == "max_tokens" else info
    return where.get(name, _UNSTAMPED) if isinstance(where, dict) else _UNSTAMPED


def _request_setting_difference(
    recorded: dict[str, Any], metadata: dict[str, Any], setting: str, option: str
) -> list[SettingDifference]:
    was, now = _request_setting(recorded, setting), _request_setting(metadata, setting)
    if was is _UNSTAMPED or now is _UNSTAMPED or was == now:
        return []
    line = (
        f"{option} differs: baseline {_setting(was)}, this run {_setting(now)} "
        "(the requests differ)"
    )
    return [SettingDifference(setting, line)]


def _setting(value: Any) -> str:
    return "unset (the server's default)" if value is None else repr(value)


def _extra_body_difference(
    recorded: dict[str, Any], metadata: dict[str, Any], extra: dict[str, Any] | None
) -> list[SettingDifference]:
    """The extra request fields, by value (masked) and by the baseline's digest of its unmasked
    values: a masked secret reads ``***``."""
    now, before = metadata.get("extra_body") or {}, recorded.get("extra_body") or {}
    if now != before:
        line = (
            f"request fields differ (--bfcl-extra-body): baseline {_json(before)}, "
            f"this run {_json(now)}"
        )
        return [SettingDifference("extra_body", line)]
    if digests_differ(recorded.get("extra_body_digest"), metadata.get("extra_body_digest"), extra):
        line = (
            f"request fields differ (--bfcl-extra-body): {_json(now)} alike, but the masked "
            "values differ (another key or secret was sent)"
        )
        return [SettingDifference("extra_body", line)]
    return []


def _json(fields: Any) -> str:
    return json.dumps(fields, sort_keys=True) if fields else "none"


# -- the extra body's digest ----------------------------------------------------------------


def extra_body_digest(extra: dict[str, Any], salt: str | None = None) -> str | None:
    """``pbkdf2-sha256$ITERATIONS$SALT$HEX`` of the fields as sent (None when there are none);
    a process's own salt unless one is given (to check another run's digest)."""
    if not extra:
        return None
    return _digest(_canonical(extra), salt if salt is not None else _PROCESS_SALT)


_PROCESS_SALT = secrets.token_hex(16)  # one per process: every report of a run says the same


@functools.lru_cache(maxsize=8)  # a run's reports ask for it again and again
def _digest(canonical: bytes, salt: str) -> str:
    derived = hashlib.pbkdf2_hmac("sha256", canonical, bytes.fromhex(salt), DIGEST_ITERATIONS)
    return f"{DIGEST_SCHEME}${DIGEST_ITERATIONS}${salt}${derived.hex()}"


def _canonical(extra: dict[str, Any]) -> bytes:
    return json.dumps(extra, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()


def digests_differ(recorded: Any, now: Any, extra: dict[str, Any] | None) -> bool:
    """Whether the baseline's digest says other values were sent. A salted digest is checked
    against the run's unmasked fields (``extra``) under the baseline's salt; an unsalted one (a
    baseline of an earlier version) against the run's plain sha256; two digests that cannot be
    compared (no unmasked fields at hand, two salts) are taken as alike: the masked values
    matched already."""
    if not isinstance(recorded, str) or not recorded:
        return False
    parts = recorded.split("$")
    if len(parts) == 4 and parts[0] == DIGEST_SCHEME:
        if extra is None:
            return False
        iterations, salt = parts[1], parts[2]
        if not iterations.isdigit() or int(iterations) != DIGEST_ITERATIONS:
            return False  # another stretching: not checkable here
        try:
            mine = extra_body_digest(extra, salt)
        except ValueError:  # a salt that is not hex
            return False
        return mine is None or not hmac.compare_digest(mine, recorded)
    if extra is not None:
        plain = hashlib.sha256(_canonical(extra)).hexdigest() if extra else None
        return plain is not None and plain != recorded
    return isinstance(now, str) and _unsalted(now) and now != recorded


def _unsalted(digest: str) -> bool:
    return "$" not in digest
