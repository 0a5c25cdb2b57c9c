"""One place that knows what a secret looks like, and replaces it with ``***`` wherever the
run writes or shows text: reports, baselines, results, logs, error messages.

Two ways to recognise a secret, used together:

- by its value: the values of the environment variables that hold keys (every variable whose
  name ends in KEY, TOKEN, SECRET, PASSWORD, ..., plus names registered with
  :func:`register_secret_env`, such as the one ``--bfcl-api-key-env`` names) and values
  registered with :func:`register_secret`; any occurrence anywhere is masked;
- by its place: the value of a flag whose name says key/token/secret/password/auth/credential
  (``--api-key X``, ``--hf-token=X``, ``['--api-key', 'X']``), the value of an
  Authorization-style header, the password of ``scheme://user:password@host``, and the value
  of ``?api_key=`` / ``&token=`` style query parameters.

Values shorter than :data:`MIN_SECRET_LENGTH` are not treated as secrets, so that a variable
set to ``1`` or ``dev`` does not mask every ``1`` in a report. What is derived from a value is
masked with it: its base64 (as a Basic header or a server's echo carries it), and its first
:data:`PREFIX_LENGTH` characters with whatever follows them (a key quoted cut short).
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
MIN_SECRET_LENGTH = 8

# The last word of a flag, header, query parameter, key or variable name that holds a secret
# ("--api-key", "HF_TOKEN", "client_secret"); the last word only, so that "--api-key-env",
# "--max-num-batched-tokens" and "--tokenizer" are not. ("pwd" is left out: $PWD is a path.)
SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "signature",
        "sig",
    }
)

_registered_values: set[str] = set()
_registered_env: set[str] = set()
_lock = threading.Lock()


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a flag, header, parameter or variable of this name holds a secret: its last
    word (split on ``-``, ``_`` and ``.``) is one of :data:`SECRET_WORDS`."""
    words = [w for w in re.split(r"[-_.\s]+", name.strip().lower()) if w]
    return bool(words) and words[-1] in SECRET_WORDS


# Flags whose value names an environment variable (the secret is that variable's value,
# masked by value), though their last word says key.
VARIABLE_FLAGS = frozenset({"bfcl-baseline-key"})


def is_secret_flag(flag: str) -> bool:
    """Whether the value after this flag (``--api-key``, ``-token``) is a secret."""
    name = flag.lstrip("-")
    return is_secret_name(name) and name.lower() not in VARIABLE_FLAGS


# In prose a secret flag may be followed by a word ("--bfcl-baseline-key asks for ..."):
# a bare lowercase word shorter than this is left alone there. A secret of that shape given
# on the command line is still masked by its value (register_secrets_in_args).
_PROSE_WORD = re.compile(r"[a-z]{1,15}")


def register_secret(value: str | None) -> None:
    """Mask this value wherever it occurs from now on (too short a value is ignored)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered_values.add(value)


def register_secret_env(name: str | None) -> None:
    """Mask the value of this environment variable (read when redacting, so a value set after
    registration counts too), whatever its name."""
    if name:
        with _lock:
            _registered_env.add(name)


def register_secrets_in_args(args: Iterable[str]) -> None:
    """Register the values of secret flags in a command line (``--api-key X``, ``--x=Y``)."""
    for value in secret_flag_values(list(args)):
        register_secret(value)


def url_credentials(url: str) -> str | None:
    """The URL with its user information masked, when it has any (``user:password@``), else
    ``None``. httpx would send it as HTTP Basic authentication in place of the API key."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if "@" not in parts.netloc:
        return None
    return parts._replace(netloc=f"{MASK}@{parts.netloc.rpartition('@')[2]}").geturl()


def register_secrets_in_url(url: str) -> None:
    """Register a URL's password and the values of its secret query parameters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    register_secret(parts.password)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if is_secret_name(name):
            register_secret(value)


def register_secrets_in_data(data: Any) -> None:
    """Register the text values of secret-named fields in JSON-like data (an extra request
    body's ``api_key`` or ``user_token``), at any depth."""
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str) and _holds_secret(key, value):
                register_secret(value)
            else:
                register_secrets_in_data(value)
    elif isinstance(data, list | tuple):
        for item in data:
            register_secrets_in_data(item)


def forget_registered_secrets() -> None:
    """Clear what was registered (a new run in the same process; tests)."""
    with _lock:
        _registered_values.clear()
        _registered_env.clear()


def secret_values() -> frozenset[str]:
    """Every value masked by value right now: registered values, and the values of registered
    and secret-named environment variables."""
    with _lock:
        registered = frozenset(_registered_values)
        env_names = frozenset(_registered_env)
    return registered | _environment_secrets(env_names)


# The environment seen last (a copy of os.environ's underlying mapping), the registered names
# then, and its secret values: every report line and failure text is redacted, and reading
# the environment through os.environ decodes each variable, about 0.1 ms a call.
_last_environment: tuple[dict[Any, Any], frozenset[str], frozenset[str]] | None = None
# pytest rewrites this variable at every phase of every test; it names a test, never a secret.
_PER_TEST_VARIABLE = "PYTEST_CURRENT_TEST"


def _environment_secrets(env_names: frozenset[str]) -> frozenset[str]:
    global _last_environment
    snapshot = _raw_environment(env_names)
    last = _last_environment
    if snapshot is not None and last is not None and last[1] == env_names and last[0] == snapshot:
        return last[2]
    secrets = frozenset(
        value
        for name, value in _environment()
        if (name in env_names or is_secret_name(name)) and len(value) >= MIN_SECRET_LENGTH
    )
    if snapshot is not None:
        _last_environment = (snapshot, env_names, secrets)
    return secrets


def _raw_environment(env_names: frozenset[str]) -> dict[Any, Any] | None:
    """A copy of CPython's mapping behind os.environ (undecoded, so cheap to copy and compare),
    without pytest's per-test variable; None where there is no such mapping."""
    raw = getattr(os.environ, "_data", None)
    encode = getattr(os.environ, "encodekey", None)
    if not isinstance(raw, dict) or encode is None:
        return None
    snapshot = dict(raw)
    if _PER_TEST_VARIABLE not in env_names:
        snapshot.pop(encode(_PER_TEST_VARIABLE), None)
    return snapshot


def _environment() -> list[tuple[str, str]]:
    # Another thread may set a variable while this one reads (the vLLM log pump does).
    for _ in range(5):
        try:
            return list(os.environ.items())
        except RuntimeError:
            continue
    return []


def _secret_flag_positions(args: list[str]) -> dict[int, str]:
    """Where a secret flag's value sits in an argument list, and what to write there:
    ``--api-key X`` masks the next argument, ``--api-key=X`` the part after ``=``."""
    positions: dict[int, str] = {}
    for index, arg in enumerate(args):
        name, sep, _value = arg.partition("=")
        if not arg.startswith("-") or not is_secret_flag(name):
            continue
        if sep:
            positions[index] = f"{name}={MASK}"
        elif index + 1 < len(args) and not args[index + 1].startswith("--"):
            positions[index + 1] = MASK
    return positions


def secret_flag_values(args: list[str]) -> list[str]:
    """The values of secret flags in an argument list: ``--api-key X`` and ``--api-key=X``."""
    values = []
    for index in _secret_flag_positions(args):
        arg = args[index]
        values.append(arg.partition("=")[2] if arg.startswith("-") else arg)
    return values


def redact_args(args: list[str]) -> list[str]:
    """An argument list with the values of secret flags masked, and every other argument
    redacted as text (a registered value inside another flag, a URL with a password)."""
    positions = _secret_flag_positions(args)
    return [positions.get(i, redact_text(arg)) for i, arg in enumerate(args)]


# -- text ---------------------------------------------------------------------------------------

_FLAG_VALUE = re.compile(
    # --api-key X, --api-key=X, --api-key 'X Y', --api-key="X"
    r"(?P<flag>(?<![\w-])--?[A-Za-z][\w.-]*)(?P<sep>=|[ \t]+)"
    r"(?P<value>'[^'\n]*'|\"[^\"\n]*\"|(?!--)[^\s'\",\]\)]+)"
)
_QUOTED_FLAG_VALUE = re.compile(
    # ['--api-key', 'X'] (a Python list), ["--api-key", "X"] (JSON)
    r"(?P<flag>(?P<q>['\"])--?[A-Za-z][\w.-]*(?P=q))(?P<sep>\s*,\s*)"
    r"(?P<vq>['\"])(?P<value>(?!--)[^'\"\n]*)(?P=vq)"
)
_HEADER = re.compile(
    # Authorization: Bearer X, x-api-key: X, "Authorization": "Basic X"
    r"(?i)(?P<name>(?<![\w-])(?:proxy-)?authorization|(?<![\w-])(?:x-)?api-key"
    r"|(?<![\w-])x-auth-token)(?P<sep>['\"]?\s*[:=]\s*['\"]?(?:(?:bearer|basic|token)\s+)?)"
    r"(?P<value>[^\s'\",;]+)"
)
# "Bearer X" on its own (a server quoting the header's value, a token in a model's answer):
# the scheme as HTTP writes it, and a token with a digit or a token's punctuation in it, so
# that prose ("bearer bonds") is left alone.
_BEARER = re.compile(
    r"(?P<head>(?<![\w-])Bearer\s+)"
    r"(?P<value>(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9_.~+/=-]{8,})"
)
# The shapes of the keys the common providers issue (OpenAI and Anthropic ``sk-``, Hugging
# Face, GitHub, GitLab, Slack, AWS access key ids, Google API keys), masked wherever they
# appear, whoever's they are: a server or a model may quote a key the run never registered.
_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})"
)
# The secret words that hold no other (each of SECRET_WORDS holds one of these).
_SECRET_WORD_PARTS = tuple(
    sorted(w for w in SECRET_WORDS if not any(o != w and o in w for o in SECRET_WORDS))
)
# How each of _KEY_SHAPES's shapes starts: where none of these occurs, it cannot match.
_KEY_SHAPE_STARTS = re.compile(r"sk-|hf_|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|AIza")
_HEADER_NAMES = ("authorization", "api-key", "x-auth-token")  # what _HEADER starts from
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'\"]*:)(?P<value>[^/\s@'\"]+)(?=@)"
)
_QUERY_VALUE = re.compile(r"(?P<head>[?&;](?P<name>[\w.-]+)=)(?P<value>[^&#\s'\",)\]>]+)")


def _mask_flag(match: re.Match[str]) -> str:
    if not is_secret_flag(match["flag"]):
        return match[0]
    if match["sep"] != "=" and _PROSE_WORD.fullmatch(match["value"]):
        return match[0]  # a word of the sentence, not the flag's value
    quote = match["value"][0] if match["value"][0] in ("'", '"') else ""
    return f"{match['flag']}{match['sep']}{quote}{MASK}{quote}"


def _mask_quoted_flag(match: re.Match[str]) -> str:
    if not is_secret_flag(match["flag"].strip("'\"")):
        return match[0]
    return f"{match['flag']}{match['sep']}{match['vq']}{MASK}{match['vq']}"


def _mask_query(match: re.Match[str]) -> str:
    return f"{match['head']}{MASK}" if is_secret_name(match["name"]) else match[0]


# A secret's first characters, when it is at least this long, are masked with what follows them
# (a server that quotes a key cut short, "sk-proj-abcd1234..."): the rest of the key.
PREFIX_LENGTH = 12
_PREFIX_MIN_SECRET = 20


def derived_forms(value: str) -> list[str]:
    """What a secret looks like once encoded: its base64 (standard and URL-safe) at each of the
    three alignments it can have inside a longer encoded text (``user:KEY`` in a Basic
    header), trimmed to the characters that depend on the secret alone."""
    import base64

    raw = value.encode("utf-8", "surrogatepass")
    forms = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        start = -(-8 * shift // 6)  # the first character made of the secret's bits only
        end = (8 * (shift + len(raw))) // 6
        core = encoded[start:end]
        if len(core) >= MIN_SECRET_LENGTH:
            forms += [core, core.replace("+", "-").replace("/", "_")]
    return forms


@functools.lru_cache(maxsize=32)
def _value_pattern(values: frozenset[str]) -> re.Pattern[str] | None:
    if not values:
        return None
    derived = {form for value in values for form in derived_forms(value)} - values
    # longest first, so that a secret containing another is masked whole
    ordered = sorted(values | derived, key=len, reverse=True)
    prefixes = sorted(
        {v[:PREFIX_LENGTH] for v in values if len(v) >= _PREFIX_MIN_SECRET}, key=len, reverse=True
    )
    # a prefix takes the rest of the word with it: the remaining characters of the key
    alternatives = [re.escape(v) for v in ordered]
    alternatives += [re.escape(p) + r"[^\s'\",;]*" for p in prefixes]
    return re.compile("|".join(alternatives))


def redact_text(text: str) -> str:
    """``text`` with every secret it holds replaced by ``***``."""
    if not text:
        return text
    return _redact_with(_value_pattern(secret_values()), text)


def _redact_with(pattern: re.Pattern[str] | None, text: str) -> str:
    """:func:`redact_text` with the pattern of the secret values looked up once (a model's
    answer is many strings: the environment is read once for all of them)."""
    if not text:
        return text
    if pattern is not None:
        text = pattern.sub(MASK, text)
    # Each pattern only where the text holds what it must start from: a failure's text is
    # redacted for every failing entry, and most hold no flag, header, URL, query or key.
    lowered = text.lower()
    # A flag's or a query parameter's value is masked only under a secret name, whose last
    # word is one of SECRET_WORDS: where none of them is in the text, neither is looked for.
    named = ("-" in text or "=" in text) and any(part in lowered for part in _SECRET_WORD_PARTS)
    if "-" in text:
        if named:
            text = _QUOTED_FLAG_VALUE.sub(_mask_quoted_flag, text)
            text = _FLAG_VALUE.sub(_mask_flag, text)
        if any(name in lowered for name in _HEADER_NAMES):
            text = _HEADER.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", text)
    elif "authorization" in lowered:
        text = _HEADER.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", text)
    if "Bearer" in text:
        text = _BEARER.sub(lambda m: f"{m['head']}{MASK}", text)
    if _KEY_SHAPE_STARTS.search(text):
        text = _KEY_SHAPES.sub(MASK, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", text)
    if "=" in text and named:
        text = _QUERY_VALUE.sub(_mask_query, text)
    return text


def redact_strings(data: Any) -> Any:
    """A copy of JSON-like data with every string in it through :func:`redact_text`, keys
    and shape kept: a model's answer, whose call and argument names are what its verdict reads
    (``{"get_token": ...}`` is a call, not a secret)."""
    if not isinstance(data, str | dict | list | tuple):
        return data
    return _strings_with(_value_pattern(secret_values()), data)


def _strings_with(pattern: re.Pattern[str] | None, data: Any) -> Any:
    if isinstance(data, str):
        return _redact_with(pattern, data)
    if isinstance(data, dict):
        return {key: _strings_with(pattern, value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return type(data)(_strings_with(pattern, item) for item in data)
    return data


def _holds_secret(key: Any, value: Any) -> bool:
    # A bare "key" or "sig" names too many things (cache keys, sort keys) to mask on its own.
    if not (isinstance(key, str) and isinstance(value, str) and value):
        return False
    return key.lower() not in ("key", "sig") and is_secret_name(key)


def redact_data(data: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, tuples, strings) with every secret masked: text
    through :func:`redact_text`, argument lists through :func:`redact_args`, and the string
    value of a key named like a secret (``"api_key": ...``) masked whole."""
    if isinstance(data, str):
        return redact_text(data)
    if isinstance(data, dict):
        return {
            redact_data(key): MASK if _holds_secret(key, value) else redact_data(value)
            for key, value in data.items()
        }
    if isinstance(data, list | tuple):
        if data and all(isinstance(item, str) for item in data):
            return type(data)(redact_args(list(data)))
        return type(data)(redact_data(item) for item in data)
    return data
