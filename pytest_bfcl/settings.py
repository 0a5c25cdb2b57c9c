"""One validated settings object, built from command-line options and ini values."""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from pytest_bfcl.dataset.categories import CATEGORIES, Kind, expand_categories
from pytest_bfcl.dataset.groups import SCORE_NAMES
from pytest_bfcl.options import OPTIONS
from pytest_bfcl.redact import (
    redact_text,
    register_secret_env,
    register_secrets_in_args,
    register_secrets_in_url,
    url_credentials,
)
from pytest_bfcl.scoring import Mode, Reasoning

DEFAULT_CATEGORIES = "all_scoring"


GateMode = Literal["significant", "any", "off"]


class GateSettings(BaseModel):
    mode: GateMode = "significant"
    alpha: float = 0.05
    min_drop: float = 1.0  # percentage points


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


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    mode: Mode = "fc"
    categories: tuple[str, ...] = tuple(expand_categories(DEFAULT_CATEGORIES))
    data_dir: Path | None = None
    report_path: Path | None = None
    html_path: Path | None = None  # the HTML report: every entry, to look into
    list_failures: int = 20  # failing entries listed at the end of the terminal output
    explain: tuple[str, ...] = ()  # entries whose failure is explained in full there
    # FC tool names: OpenAI-compatible APIs reject dots, so "a.b" is sent and expected as "a_b".
    underscore_to_dot: bool = True
    # score as the leaderboard scores this registered model (its mode and name convention)
    leaderboard_model: str | None = None
    # where a thinking model's reasoning is: a field of its own, or <think> blocks in the text
    # too (pytest_bfcl.decode.reasoning)
    reasoning: Reasoning = "field"
    # multi-turn: also fail calls made in a turn whose ground truth is empty (off by default,
    # as on the leaderboard)
    strict_multi_turn: bool = False
    # regression gating
    baseline_path: Path | None = None
    save_baseline_path: Path | None = None
    baseline_common: bool = False  # compare on the common part of a mismatched baseline
    # gate on what was scored even when entries are missing (the reports say "incomplete")
    allow_incomplete: bool = False
    # score each category over the entries present, as the leaderboard's --partial-eval
    partial_eval: bool = False
    gate: GateSettings = GateSettings()
    min_scores: tuple[tuple[str, float], ...] = ()
    # subsets and extra reports
    sample: float | int | None = None
    seed: int = 0
    # repeated samples: every entry asked this many times
    samples: int = 1
    # plan the sample: per category, the entries that detect a drop of this many points
    detect: float | None = None
    # entries with a known ground-truth error: left out of the gate, compared, or corrected
    known_errors: Literal["exclude", "include", "correct"] = "exclude"
    csv_dir: Path | None = None
    chart_path: Path | None = None
    # OpenAI-compatible endpoints
    base_urls: tuple[str, ...] = ()
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int | None = None
    sampling_seed: int | None = None
    timeout: float = 120.0
    retries: int = 4
    concurrency: int = 8
    # the largest answer read from a server (8 MiB); a longer one is cut and fails the entry
    max_response_bytes: int = 8 * 2**20
    # the largest conversation one entry may hold and resend (16 MiB, several times any model's
    # context window); one that outgrows it ends as the model's failure
    max_entry_bytes: int = 16 * 2**20
    cache_dir: Path = Path(".bfcl-cache")
    no_cache: bool = False
    refresh: bool = False
    model_identity: str = ""
    results_dir: Path | None = None
    progress_interval: float = 30.0  # seconds between progress lines; 0: none
    # an OpenAI-compatible server started for the session (--bfcl-server-cmd)
    server_cmd: str = ""
    server_log: Path | None = None
    server_startup_timeout: float = 600.0
    # Set for xdist workers only (from the controller's worker input): the server it started.
    server_shared_url: str | None = None
    server_shared_log: str | None = None
    # vLLM started by the plugin (--bfcl-model=vllm:MODEL_OR_PATH)
    vllm_args: str = ""
    vllm_exe: str = "vllm"
    vllm_port: int | None = None
    vllm_log: Path | None = None
    vllm_startup_timeout: float = 1200.0
    # one server per replica: a count, or device sets separated by ';' ("0,1;2,3")
    vllm_replicas: str | None = None
    # Set for xdist workers only (from the controller's worker input): the servers it started.
    vllm_shared_urls: tuple[str, ...] = ()
    vllm_shared_logs: tuple[str, ...] = ()
    # agentic categories
    web: Literal["live", "record", "replay", "off"] = "live"
    web_cassette: Path | None = None
    web_provider: Literal["auto", "serpapi", "duckduckgo"] = "auto"
    web_search_url: str | None = None
    web_allow_private: bool = False
    web_failure_rate: float = 0.0
    embedding_model: str = "all-MiniLM-L6-v2"
    memory_dir: Path | None = None
    price_input: float | None = None  # USD per million input tokens
    price_output: float | None = None  # USD per million output tokens

    @field_validator("categories", mode="before")
    @classmethod
    def _expand(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, str | list | tuple):
            return tuple(expand_categories(value))
        raise TypeError("categories must be a comma-separated string or a list")

    @field_validator("explain", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = value.split()
        return tuple(value or ())

    @field_validator("base_urls", mode="before")
    @classmethod
    def _urls(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = value.split()
        return tuple(url.rstrip("/") for url in value or ())

    @field_validator("sample", mode="before")
    @classmethod
    def _sample(cls, value: Any) -> float | int | None:
        return parse_sample(value) if isinstance(value, str) else value

    @field_validator("min_scores", mode="before")
    @classmethod
    def _thresholds(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split()
        return tuple(parse_threshold(v) if isinstance(v, str) else v for v in value or ())

    @model_validator(mode="after")
    def _in_range(self) -> Settings:
        # The same rules as the command line, for settings built in Python (engine use).
        problems = []
        for name, rule in RULES.items():
            if not rule.checks_python:
                continue
            value = _field_value(self, name)
            for item in _items(value) if name in _APPEND_NAMES else [value]:
                if item is None:
                    continue
                try:
                    rule.convert(item)
                except ValueError as exc:
                    problems.append(_problem(name, item, rule, exc))
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _field_value(settings: Settings, name: str) -> Any:
    if name.startswith("gate_"):
        return getattr(settings.gate, name.removeprefix("gate_"), None)
    return getattr(settings, name, None)


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
SWITCH = Rule("true or false", _switch)


def _path_rule(accepts: str, convert: Callable[[Any], Path]) -> Rule:
    return Rule(accepts, convert, checks_python=False)


EXISTING_DIR = _path_rule("an existing directory", _existing_dir)
EXISTING_FILE = _path_rule("an existing file", _existing_file)
FILE_TO_WRITE = _path_rule("a file path (not a directory)", _file_to_write)
DIR_TO_WRITE = _path_rule("a directory path (not a file)", _dir_to_write)
WEB_URL = Rule("an http:// or https:// URL with a host", _web_url)

# Every option's rule, by settings name (a test checks that no option is missing).
RULES: dict[str, Rule] = {
    "model": TEXT,
    "mode": choice(*get_args(Mode)),
    "categories": Rule("category and group names, comma-separated", _categories),
    "strict_multi_turn": SWITCH,
    "underscore_to_dot": SWITCH,
    "leaderboard_model": TEXT,
    "reasoning": choice(*get_args(Reasoning)),
    "data_dir": EXISTING_DIR,
    "report_path": FILE_TO_WRITE,
    "html_path": FILE_TO_WRITE,
    "list_failures": whole(0),
    "explain": TEXT,
    "baseline_path": EXISTING_FILE,
    "save_baseline_path": FILE_TO_WRITE,
    "baseline_common": SWITCH,
    "allow_incomplete": SWITCH,
    "partial_eval": SWITCH,
    "gate_mode": choice("significant", "any", "off"),
    "gate_alpha": number(above=0, below=1),
    "gate_min_drop": number(at_least=0),
    "min_scores": Rule("NAME=PERCENT with PERCENT from 0 to 100 (such as overall=80)", _threshold),
    "sample": Rule(
        "a count of at least 1 (such as 200) or a fraction greater than 0 and at most 1 "
        "(such as 0.1 or 10%)",
        _sample,
    ),
    "seed": whole(),
    "samples": whole(1, 1000),
    "detect": number(above=0, below=100),
    "known_errors": choice("exclude", "include", "correct"),
    "csv_dir": DIR_TO_WRITE,
    "chart_path": FILE_TO_WRITE,
    "base_urls": WEB_URL,
    "api_key_env": Rule("the name of an environment variable (letters, digits, _)", _env_name),
    "temperature": number(at_least=0),
    "max_tokens": whole(1),
    "sampling_seed": whole(),
    "timeout": number(above=0),
    "retries": whole(0),
    "concurrency": whole(1),
    "max_response_bytes": whole(1),
    "max_entry_bytes": whole(1024),
    "cache_dir": DIR_TO_WRITE,
    "no_cache": SWITCH,
    "refresh": SWITCH,
    "vllm_args": Rule("flags for 'vllm serve'", _shell_words),
    "vllm_exe": TEXT,
    "vllm_port": whole(1, 65535),
    "vllm_log": FILE_TO_WRITE,
    "vllm_startup_timeout": number(above=0),
    "server_cmd": Rule("a command with {port} where the port goes", _server_command),
    "server_log": FILE_TO_WRITE,
    "server_startup_timeout": number(above=0),
    "vllm_replicas": Rule(
        "a count from 1 to 64, or device sets separated by ';' (such as 0,1;2,3)", _replicas
    ),
    "progress_interval": number(at_least=0),
    "results_dir": DIR_TO_WRITE,
    "web": choice("live", "record", "replay", "off"),
    "web_cassette": DIR_TO_WRITE,
    "web_provider": choice("auto", "serpapi", "duckduckgo"),
    "web_search_url": WEB_URL,
    "web_allow_private": SWITCH,
    "web_failure_rate": number(at_least=0, at_most=1),
    "embedding_model": TEXT,
    "memory_dir": DIR_TO_WRITE,
    "price_input": number(at_least=0),
    "price_output": number(at_least=0),
    "model_identity": TEXT,
}

_FLAGS = {opt.name: opt.flag for opt in OPTIONS}
_APPEND_NAMES = {opt.name for opt in OPTIONS if opt.kind == "append"}
_SWITCH_NAMES = {opt.name for opt in OPTIONS if opt.kind == "flag"}


def _items(value: Any) -> list[Any]:
    """The values of a repeatable option: a list (command line, ini lines) or, from Python,
    one whitespace-separated string."""
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    return list(value)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) and value.strip() == value and value else repr(value)


def _problem(
    name: str, value: Any, rule: Rule, exc: ValueError, names: dict[str, str] | None = None
) -> str:
    """One line naming the option as the user typed it (its flag, or its ini key when the
    value came from the ini file), what it accepts, and what it got."""
    flag = (names or {}).get(name) or _FLAGS.get(name, name)
    if isinstance(exc, Unfit):
        return f"{flag} must be {rule.accepts} (got {_shown(value)})"
    return f"{flag}: {exc}"


def _given(name: str, value: Any) -> bool:
    # Not given: None (no option), "" or [] (empty ini value), False for a switch (left off);
    # False for any other setting is a value (``underscore_to_dot=False`` from Python).
    if value is False:
        return name not in _SWITCH_NAMES
    return not (value is None or (isinstance(value, str | list) and not value))


def _convert_all(
    clean: dict[str, Any], names: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Every given value through its option's rule: the converted values and the problems."""
    converted: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in clean.items():
        rule = RULES.get(name)
        if rule is None:  # an option without a rule yet: pydantic alone judges it
            converted[name] = value
            continue
        if name in _APPEND_NAMES:
            items = []
            for item in _items(value):
                try:
                    items.append(rule.convert(item))
                except ValueError as exc:
                    problems.append(_problem(name, item, rule, exc, names))
            converted[name] = tuple(items)
            continue
        try:
            converted[name] = rule.convert(value)
        except ValueError as exc:
            problems.append(_problem(name, value, rule, exc, names))
    return converted, problems


def _cross_checks(values: dict[str, Any], names: dict[str, str] | None = None) -> list[str]:
    """Problems that only a combination of options shows, each naming (after the flags) the
    ini keys of the options involved that were set in the ini file."""
    found: list[tuple[str, tuple[str, ...]]] = []  # (problem, the options involved)
    web = values.get("web", "live")
    try:
        categories = expand_categories(values.get("categories", DEFAULT_CATEGORIES))
    except ValueError:
        categories = []  # already reported
    searching = any(CATEGORIES[n].kind is Kind.WEB_SEARCH for n in categories if n in CATEGORIES)
    cassette = values.get("web_cassette")
    if searching and web in ("record", "replay") and cassette is None:
        found.append((f"--bfcl-web={web} needs --bfcl-web-cassette=DIR", ("web",)))
    if searching and web == "replay" and cassette is not None and not Path(cassette).is_dir():
        found.append(
            (
                f"--bfcl-web-cassette must be an existing directory with --bfcl-web=replay "
                f"(got {cassette})",
                ("web_cassette", "web"),
            )
        )
    model = str(values.get("model", ""))
    served = model not in ("oracle", "") and not model.startswith(("oracle:", "replay:", "vllm:"))
    if values.get("server_cmd") and not served:
        found.append(
            (
                "--bfcl-server-cmd starts the server of an endpoint model: give --bfcl-model the "
                "name the server serves the model under",
                ("server_cmd", "model"),
            )
        )
    answers_itself = model == "oracle" or model.startswith(("oracle:", "replay:"))
    if answers_itself and values.get("base_urls"):
        found.append(
            (
                f"--bfcl-base-url is the endpoint of a served model, but --bfcl-model={model} "
                "sends no request (it answers without a server): leave --bfcl-base-url out, or "
                "give --bfcl-model the name of the model the endpoint serves",
                ("base_urls", "model"),
            )
        )
    if values.get("server_cmd") and values.get("base_urls"):
        found.append(
            (
                "--bfcl-server-cmd and --bfcl-base-url exclude each other",
                ("server_cmd", "base_urls"),
            )
        )
    found += [
        (credentials_problem(masked, "--bfcl-base-url"), ("base_urls",))
        for url in values.get("base_urls", ())
        if (masked := url_credentials(url)) is not None
    ]
    return [problem + _set_in_ini(involved, names or {}) for problem, involved in found]


def _set_in_ini(involved: tuple[str, ...], names: dict[str, str]) -> str:
    """`` (set in the ini file: bfcl_web (in pyproject.toml))`` for the options involved that
    came from the ini file, so the line to fix is named; empty when all came from flags."""
    keys = [names[name] for name in involved if name in names]
    return f" (set in the ini file: {', '.join(keys)})" if keys else ""


def credentials_problem(masked_url: str, where: str) -> str:
    """Why a base URL with user information is refused, and where the key belongs."""
    return (
        f"{where} {masked_url} holds credentials (user:password@): they would go out as HTTP "
        "Basic authentication in place of the API key; put the key in $OPENAI_API_KEY, or "
        "name the variable that holds it with --bfcl-api-key-env"
    )


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # free text with an odd quote
        return text.split()


def _register_secrets(settings: Settings) -> None:
    """What this run's settings hold that must never be written: the key variable's value,
    secret serving flags, passwords and keys in endpoint URLs."""
    register_secret_env(settings.api_key_env)
    register_secrets_in_args(_words(settings.vllm_args))
    register_secrets_in_args(_words(settings.model_identity))
    for url in (*settings.base_urls, settings.web_search_url or ""):
        register_secrets_in_url(url)


def build_settings(values: dict[str, Any], names: dict[str, str] | None = None) -> Settings:
    """Settings from option values keyed by :attr:`Option.name` (``None`` = not given), as
    typed on the command line, in an ini file, or given in Python. Every value is checked
    against its option's rule; all problems are raised together as a ValueError, one line
    each, naming the options as the user typed them (``names``: how to name an option whose
    value did not come from its flag, such as its ini key). The run's secrets are registered
    with :mod:`pytest_bfcl.redact` on the way."""
    clean, problems = _convert_all({k: v for k, v in values.items() if _given(k, v)}, names)
    problems += _cross_checks(clean, names)
    if problems:
        raise ValueError(redact_text("\n".join(problems)))
    gate = {
        key.removeprefix("gate_"): clean.pop(key)
        for key in ("gate_mode", "gate_alpha", "gate_min_drop")
        if key in clean
    }
    if gate:
        clean["gate"] = gate
    # Expanded now, so that categories a project added through the hooks are included.
    clean.setdefault("categories", DEFAULT_CATEGORIES)
    if clean.get("mode") == "prompt":
        clean.setdefault("underscore_to_dot", False)
    try:
        settings = Settings.model_validate(clean)
    except ValidationError as exc:
        raise ValueError(redact_text(_pydantic_problems(exc, names or {}))) from None
    _register_secrets(settings)
    return settings


def _pydantic_problems(exc: ValidationError, names: dict[str, str]) -> str:
    """Pydantic's errors, one line each, with the option's flag (or ini key) instead of the
    field name."""
    lines = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        name = "_".join(loc[:2]) if loc[:1] == ["gate"] else (loc[0] if loc else "")
        flag = names.get(name) or _FLAGS.get(name, name or "settings")
        message = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"{flag}: {message} (got {_shown(error.get('input'))})")
    return "\n".join(lines)
