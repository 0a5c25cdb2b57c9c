"""What an option accepts, and how its value as typed (command line, ini file, Python) becomes
the setting's value: the :class:`Rule` each option names where it is declared
(:mod:`pytest_bfcl.options`), and the parsers of thresholds and samples. Plain Python, cheap to
import: the plugin reads the options in every pytest run."""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pytest_bfcl.dataset.categories import CATEGORIES, expand_categories
from pytest_bfcl.dataset.groups import SCORE_NAMES
from pytest_bfcl.files import output_problem
from pytest_bfcl.http_headers import is_header_name, is_reserved_header
from pytest_bfcl.redact import is_secret_name
from pytest_bfcl.scoring import HistoryEcho, Mode, Reasoning, WireFormat

GateMode = Literal["significant", "any", "off"]
KnownErrors = Literal["exclude", "include", "correct"]
WebMode = Literal["live", "record", "replay", "off"]
WebProvider = Literal["auto", "serpapi", "duckduckgo"]


def parse_threshold(spec: str) -> tuple[str, float]:
    """``NAME=VALUE``: VALUE in percent (``85``, ``85%``, ``85.5``)."""
    name, sep, value = spec.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--bfcl-min-score expects NAME=PERCENT, got {spec!r}")
    try:
        number = float(value.strip().rstrip("%"))
    except ValueError:
        raise ValueError(f"--bfcl-min-score {spec!r}: {value!r} is not a number") from None
    if not 0 <= number <= 100:
        raise ValueError(f"--bfcl-min-score {spec!r}: the score must be between 0 and 100")
    check_score_name(name.strip())
    return name.strip(), number


class UnknownScore(ValueError):
    """A threshold names no score of the run (not a category, group or ``overall``)."""


def check_score_name(name: str) -> None:
    """Scores a threshold may name: ``overall``, a group, or a category (a project's own
    categories included, registered before the settings are built)."""
    if name not in SCORE_NAMES and name not in CATEGORIES:
        groups = ", ".join(sorted(SCORE_NAMES))
        raise UnknownScore(
            f"unknown score {name!r}: name overall, a group ({groups}) or a category name"
        )


def parse_sample(spec: str) -> float | int:
    """``0.1`` or ``10%`` is a fraction of each category; ``200`` is a total entry count."""
    text = spec.strip()
    try:
        if text.endswith("%"):
            value: float | int = float(text[:-1]) / 100
        elif "." in text:
            value = float(text)
        else:
            value = int(text)
    except ValueError:
        raise ValueError(f"--bfcl-sample expects a count or a fraction, got {spec!r}") from None
    if isinstance(value, float) and not 0 < value <= 1:
        raise ValueError(f"--bfcl-sample fraction must be in (0, 1], got {spec!r}")
    if isinstance(value, int) and value < 1:
        raise ValueError(f"--bfcl-sample count must be at least 1, got {spec!r}")
    return value


class Unfit(ValueError):
    """A value outside what its option accepts (the rule's ``accepts`` says what that is)."""


@dataclass(frozen=True)
class Rule:
    """What one option accepts. ``convert`` turns the value as typed (text from the command
    line or an ini file, or a Python value) into the setting's value; it raises
    :class:`Unfit` when the value does not fit ``accepts``, or a ValueError with its own
    message. ``checks_python``: also checked on settings built in Python (paths are checked
    only at start-up, where they are known to be the user's)."""

    accepts: str
    convert: Callable[[Any], Any]
    checks_python: bool = True


def _as_whole(value: Any) -> int:
    if isinstance(value, bool):
        raise Unfit
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise Unfit from None
    raise Unfit


def _as_finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise Unfit
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except ValueError:
        raise Unfit from None
    if not math.isfinite(number):
        raise Unfit
    return number


def whole(low: int | None = None, high: int | None = None) -> Rule:
    """A whole number, with optional bounds (both included)."""
    if low is not None and high is not None:
        accepts = f"a whole number from {low} to {high}"
    elif low is not None:
        accepts = f"a whole number of at least {low}"
    else:
        accepts = "a whole number"

    def convert(value: Any) -> int:
        number = _as_whole(value)
        if (low is not None and number < low) or (high is not None and number > high):
            raise Unfit
        return number

    return Rule(accepts, convert)


def number(
    *,
    above: float | None = None,
    at_least: float | None = None,
    below: float | None = None,
    at_most: float | None = None,
) -> Rule:
    """A finite number with optional bounds (``above``/``below`` exclude the bound)."""
    bounds = [
        f"greater than {above:g}" if above is not None else "",
        f"at least {at_least:g}" if at_least is not None else "",
        f"less than {below:g}" if below is not None else "",
        f"at most {at_most:g}" if at_most is not None else "",
    ]
    said = " and ".join(b for b in bounds if b)
    if at_least is not None and at_most is not None:
        said = f"from {at_least:g} to {at_most:g}"
    accepts = f"a finite number {said}".rstrip()

    def convert(value: Any) -> float:
        x = _as_finite(value)
        if (above is not None and x <= above) or (at_least is not None and x < at_least):
            raise Unfit
        if (below is not None and x >= below) or (at_most is not None and x > at_most):
            raise Unfit
        return x

    return Rule(accepts, convert)


def choice(*allowed: str) -> Rule:
    """One of a fixed set of words (any case)."""

    def convert(value: Any) -> str:
        word = value.strip().lower() if isinstance(value, str) else value
        if word not in allowed:
            raise Unfit
        return word

    return Rule(f"one of {', '.join(allowed)}", convert)


def choices(*allowed: str) -> Rule:
    """Words of a fixed set, comma-separated (any case, each once)."""

    def convert(value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list | tuple):
            raise Unfit
        words = [str(w).strip().lower() for w in value if str(w).strip()]
        if any(w not in allowed for w in words):
            raise Unfit
        return tuple(dict.fromkeys(words))

    return Rule(f"names from {', '.join(allowed)}, comma-separated", convert)


# The request settings a pull request may change on purpose (gate/settings_change.py).
DECLARABLE_SETTINGS = ("max_tokens", "temperature", "extra_body", "wire_format", "history_echo")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _switch(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise Unfit


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise Unfit
    return value


def _env_name(value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value.strip()):
        raise Unfit
    return value.strip()


def _web_url(value: Any) -> str:
    if not isinstance(value, str):
        raise Unfit
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        raise Unfit from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Unfit
    return value.strip()


def _header_name(value: Any) -> str:
    """An HTTP header name (a token); ``none`` (or "", from Python): no header (""). Names
    HTTP and the API use, and names that say they carry a key, are refused."""
    if not isinstance(value, str) or not is_header_name(value.strip()):
        raise Unfit
    text = value.strip()
    if is_reserved_header(text) or is_secret_name(text.lower()):
        raise ValueError(
            f"{text} is a header the request itself needs (HTTP's, or the API's key and "
            "account); name a header of the router's own, such as X-Session-ID, or none"
        )
    return "" if text.lower() == "none" else text


def _shell_words(value: Any) -> str:
    if not isinstance(value, str):
        raise Unfit
    try:
        shlex.split(value)
    except ValueError as exc:  # an unbalanced quote
        raise ValueError(f"cannot be split into flags: {exc} (got {value})") from None
    return value


def _replicas(value: Any) -> str:
    """A count of replicas, or device sets separated by ';' (checked in full when starting)."""
    text = str(value).strip() if isinstance(value, str | int) else ""
    if text.isdigit():
        if 1 <= int(text) <= 64:
            return text
        raise Unfit
    if re.fullmatch(r"[\w-]+(\s*,\s*[\w-]+)*(\s*;\s*[\w-]+(\s*,\s*[\w-]+)*)*\s*;?", text):
        return text
    raise Unfit


SERVER_PORT_FIELD = "{port}"  # where --bfcl-server-cmd's port goes


def server_command_words(template: str) -> list[str]:
    """A --bfcl-server-cmd's words, ``{port}`` still in place; ``ValueError`` says what is
    wrong with it."""
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise ValueError(f"cannot be split into words ({exc})") from None
    if not words:
        raise ValueError("is empty")
    if not any(SERVER_PORT_FIELD in word for word in words):
        raise ValueError(f"must say where the port goes with {SERVER_PORT_FIELD}")
    return words


def _server_command(value: Any) -> str:
    if not isinstance(value, str):
        raise Unfit
    if value:  # "": no server to start
        server_command_words(value)
    return value


# Request fields the plugin writes itself, and the option that sets each (None: no option; the
# run needs the plugin's own value, or a single non-streamed answer).
OWN_REQUEST_FIELDS: dict[str, str | None] = {
    "model": "--bfcl-model",
    "messages": None,
    "tools": None,
    "temperature": "--bfcl-temperature",
    "max_tokens": "--bfcl-max-tokens",
    "max_completion_tokens": "--bfcl-max-tokens",
    "seed": "--bfcl-sampling-seed",
    "stream": None,
    "n": None,
    "store": None,  # false, as the leaderboard's handlers send it
    # the Responses API's own (--bfcl-wire-format=responses)
    "input": None,
    "max_output_tokens": "--bfcl-max-tokens",
}


def _extra_body(value: Any) -> dict[str, Any]:
    """A JSON object of request fields (text), or a dict from Python; none the plugin writes."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError as exc:
            # the text is not quoted: it may hold the keys the request needs
            raise ValueError(f"is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise Unfit
    for field in value:
        if field in OWN_REQUEST_FIELDS:
            option = OWN_REQUEST_FIELDS[field]
            how = f"set it with {option}" if option else "the plugin sets it"
            raise ValueError(f"cannot set {field!r}: {how}")
    return dict(value)


def _as_path(value: Any) -> Path:
    if not isinstance(value, str | Path) or not str(value).strip():
        raise Unfit
    return Path(value)


def _existing_dir(value: Any) -> Path:
    path = _as_path(value)
    if not path.is_dir():
        raise Unfit
    return path


def _existing_file(value: Any) -> Path:
    path = _as_path(value)
    if not path.is_file():
        raise Unfit
    return path


def _file_to_write(value: Any) -> Path:
    path = _as_path(value)
    if path.is_dir():
        raise Unfit
    problem = output_problem(path)  # a device, a FIFO, a link: never replaced by a file
    if problem is not None:
        raise ValueError(f"{path} {problem}")
    return path


def _dir_to_write(value: Any) -> Path:
    path = _as_path(value)
    if path.exists() and not path.is_dir():
        raise Unfit
    return path


def _sample(value: Any) -> float | int:
    if isinstance(value, str):
        try:
            return parse_sample(value)
        except ValueError:
            raise Unfit from None
    if isinstance(value, bool):
        raise Unfit
    if isinstance(value, int) and value >= 1:
        return value
    if isinstance(value, float) and 0 < value <= 1:
        return value
    raise Unfit


def _threshold(value: Any) -> tuple[str, float]:
    if isinstance(value, str):
        try:
            return parse_threshold(value)
        except UnknownScore:
            raise
        except ValueError:
            raise Unfit from None
    if isinstance(value, tuple | list) and len(value) == 2 and isinstance(value[0], str):
        score = _as_finite(value[1])
        if 0 <= score <= 100:
            return value[0], score
    raise Unfit


def _categories(value: Any) -> Any:
    if not isinstance(value, str | list | tuple):
        raise Unfit
    expand_categories(value)  # names what it does not know, with the known names
    return value


TEXT = Rule("a text", _text)
SETTINGS_CHANGE = choices(*DECLARABLE_SETTINGS)
SWITCH = Rule("true or false", _switch)


def _path_rule(accepts: str, convert: Callable[[Any], Path]) -> Rule:
    return Rule(accepts, convert, checks_python=False)


EXISTING_DIR = _path_rule("an existing directory", _existing_dir)
EXISTING_FILE = _path_rule("an existing file", _existing_file)
FILE_TO_WRITE = _path_rule("a file path (not a directory)", _file_to_write)
DIR_TO_WRITE = _path_rule("a directory path (not a file)", _dir_to_write)
WEB_URL = Rule("an http:// or https:// URL with a host", _web_url)

# Rules of their own kind of value (the others are built where the option is declared).
MODE = choice(*get_args(Mode))
CATEGORY_NAMES = Rule("category and group names, comma-separated", _categories)
REASONING = choice(*get_args(Reasoning))
HISTORY_ECHO = choice(*get_args(HistoryEcho))
GATE_MODE = choice(*get_args(GateMode))
THRESHOLD = Rule("NAME=PERCENT with PERCENT from 0 to 100 (such as overall=80)", _threshold)
SAMPLE_SIZE = Rule(
    "a count of at least 1 (such as 200) or a fraction greater than 0 and at most 1 "
    "(such as 0.1 or 10%)",
    _sample,
)
KNOWN_ERRORS = choice(*get_args(KnownErrors))
WIRE_FORMAT = choice(*get_args(WireFormat))
ENV_NAME = Rule("the name of an environment variable (letters, digits, _)", _env_name)
HEADER_NAME = Rule("an HTTP header name (such as X-Session-ID), or none", _header_name)
EXTRA_BODY = Rule("a JSON object of request fields", _extra_body)
VLLM_FLAGS = Rule("flags for 'vllm serve'", _shell_words)
SERVER_COMMAND = Rule("a command with {port} where the port goes", _server_command)
REPLICAS = Rule(
    "a count from 1 to 64, or device sets separated by ';' (such as 0,1;2,3)", _replicas
)
WEB_MODE = choice(*get_args(WebMode))
WEB_PROVIDER = choice(*get_args(WebProvider))
