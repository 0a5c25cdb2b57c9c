"""One validated settings object, built from command-line options and ini values."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pytest_bfcl.dataset.categories import expand_categories
from pytest_bfcl.option_rules import (
    GateMode,
    KnownErrors,
    Rule,
    Unfit,
    WebMode,
    WebProvider,
    parse_sample,
    parse_threshold,
)
from pytest_bfcl.options import OPTIONS, RULES
from pytest_bfcl.options.combinations import combination_problems
from pytest_bfcl.options.outputs import OUTPUT_OPTIONS, output_conflict
from pytest_bfcl.printable import printable
from pytest_bfcl.redact import (
    redact_data,
    redact_text,
    register_secret_env,
    register_secrets_in_args,
    register_secrets_in_data,
    register_secrets_in_url,
)
from pytest_bfcl.scoring import REFERENCE_TEMPERATURE, HistoryEcho, Mode, Reasoning, WireFormat

# The header that names a request's conversation by default: the first one vllm-router's
# consistent_hash policy reads, and the name other LLM gateways read for sticky sessions.
SESSION_HEADER = "X-Session-ID"
# names the served model's revision when --bfcl-model-revision does not (CI sets it per commit)
REVISION_ENV = "BFCL_MODEL_REVISION"

DEFAULT_CATEGORIES = "all_scoring"


class GateSettings(BaseModel):
    mode: GateMode = "significant"
    alpha: float = 0.05
    min_drop: float = 1.0  # percentage points


class Settings(BaseModel):
    # protected_namespaces: pydantic before 2.10 warns of any field named model_* (model_identity)
    model_config = ConfigDict(frozen=True, protected_namespaces=())

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
    # how an answer is echoed into a conversation's history (pytest_bfcl.models.leaderboard_wire)
    history_echo: HistoryEcho = "as-returned"
    # how an endpoint model is asked (None: as --bfcl-leaderboard-model's handler, else chat)
    wire_format: WireFormat | None = None
    # multi-turn: also fail calls made in a turn whose ground truth is empty (off by default,
    # as on the leaderboard)
    strict_multi_turn: bool = False
    # conversations: text arguments kept as written, not rewritten as the leaderboard does
    # (a correction of a reference bug: the run no longer compares with the leaderboard)
    exact_call_text: bool = False
    # regression gating
    baseline_path: Path | None = None
    save_baseline_path: Path | None = None
    baseline_common: bool = False  # compare on the common part of a mismatched baseline
    # request settings set apart from the baseline's on purpose: measured, not refused
    settings_change: tuple[str, ...] = ()
    # gate on what was scored even when entries are missing (the reports say "incomplete")
    allow_incomplete: bool = False
    # score each category over the entries present, as the leaderboard's --partial-eval
    partial_eval: bool = False
    gate: GateSettings = GateSettings()
    min_scores: tuple[tuple[str, float], ...] = ()
    # subsets and extra reports
    sample: float | int | None = None
    seed: int | None = None  # None: --bfcl-sample's 0; the sequential stages' from the commit
    # repeated samples: every entry asked this many times
    samples: int = 1
    # plan the sample: per category, the entries that detect a drop of this many points
    detect: float | None = None
    # the sequential gate: nested stages of each category, extended while the gate is unsure
    sequential: bool = False
    # entries with a known ground-truth error: left out of the gate, compared, or corrected
    known_errors: KnownErrors = "exclude"
    csv_dir: Path | None = None
    chart_path: Path | None = None
    # OpenAI-compatible endpoints
    base_urls: tuple[str, ...] = ()
    # the header naming a request's conversation (routers keep it on one replica); "": none
    session_header: str = SESSION_HEADER
    api_key_env: str = "OPENAI_API_KEY"
    baseline_key_env: str | None = None  # names the variable with the baseline signing key
    temperature: float = REFERENCE_TEMPERATURE  # the leaderboard's, unless set
    max_tokens: int | None = None
    # request fields beyond the leaderboard's (tool_choice, chat_template_kwargs, ...)
    extra_body: dict[str, Any] = {}
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
    # the served model's revision, in the cache identity (a commit: another one asks again)
    model_revision: str = Field(default_factory=lambda: os.environ.get(REVISION_ENV, ""))
    results_dir: Path | None = None
    progress_interval: float = 30.0  # seconds between progress lines; 0: none
    # the checkpoint folder whose tokenizer counts prompt tokens on the completions route
    tokenizer: Path | None = None
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
    vllm_start_request: str | None = None  # the file that asks the controller to start them
    # agentic categories
    web: WebMode = "live"
    web_cassette: Path | None = None
    web_provider: WebProvider = "auto"
    web_search_url: str | None = None
    web_allow_private: bool = False
    web_failure_rate: float = 0.0
    embedding_model: str = "all-MiniLM-L6-v2"
    memory_dir: Path | None = None
    price_input: float | None = None  # USD per million input tokens
    price_output: float | None = None  # USD per million output tokens
    pace: float | None = None  # queries/s stated for the estimate before a run

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
        sequential = sequential_conflict(self)
        if sequential:
            raise ValueError(sequential)
        outputs = output_conflict(self.baseline_path, {n: getattr(self, n) for n in OUTPUT_OPTIONS})
        if outputs:
            raise ValueError(outputs)
        return self


def sequential_conflict(settings: Settings) -> str | None:
    """Why ``--bfcl-sequential`` cannot run with these settings (its stages are its sample, and
    its stopping rule is the significant gate's against a baseline), or ``None``."""
    if not settings.sequential:
        return None
    if settings.sample is not None or settings.detect is not None:
        return (
            "--bfcl-sequential draws its own stages from each category; drop "
            "--bfcl-sample/--bfcl-detect"
        )
    if settings.baseline_path is None:
        return (
            "--bfcl-sequential extends the run while the gate is unsure: it needs --bfcl-baseline"
        )
    if settings.gate.mode != "significant":
        mode = settings.gate.mode
        return f"--bfcl-sequential stops on the significant gate's evidence, not --bfcl-gate={mode}"
    if settings.min_scores:
        return (
            "--bfcl-min-score checks a score of the whole selection, which --bfcl-sequential "
            "asks only part of; check it in the full run (drop one of them)"
        )
    return None


def _field_value(settings: Settings, name: str) -> Any:
    if name.startswith("gate_"):
        return getattr(settings.gate, name.removeprefix("gate_"), None)
    return getattr(settings, name, None)


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
    """A value as an error quotes it: secrets masked (the values of secret-named fields
    whole), control characters escaped, bounded."""
    value = redact_data(value)
    text = value if isinstance(value, str) and value.strip() == value and value else repr(value)
    return printable(text)


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


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # free text with an odd quote
        return text.split()


def _register_secrets(settings: Settings) -> None:
    """What this run's settings hold that must never be written: the key variable's value,
    secret serving flags, passwords and keys in endpoint URLs."""
    register_secret_env(settings.api_key_env)
    register_secret_env(settings.baseline_key_env)
    register_secrets_in_args(_words(settings.vllm_args))
    register_secrets_in_args(_words(settings.model_identity))
    for url in (*settings.base_urls, settings.web_search_url or ""):
        register_secrets_in_url(url)
    register_secrets_in_data(settings.extra_body)  # {"api_key": ..., "user_token": ...}


def build_settings(values: dict[str, Any], names: dict[str, str] | None = None) -> Settings:
    """Settings from option values keyed by :attr:`Option.name` (``None`` = not given), as
    typed on the command line, in an ini file, or given in Python. Every value is checked
    against its option's rule; all problems are raised together as a ValueError, one line
    each, naming the options as the user typed them (``names``: how to name an option whose
    value did not come from its flag, such as its ini key). The run's secrets are registered
    with :mod:`pytest_bfcl.redact` on the way."""
    clean, problems = _convert_all({k: v for k, v in values.items() if _given(k, v)}, names)
    register_secrets_in_data(clean.get("extra_body"))  # masked in every message from here on
    problems += combination_problems(clean, DEFAULT_CATEGORIES, names)
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
        if not loc:  # a rule across the settings: the value is all of them, never quoted
            lines.append(message)
            continue
        lines.append(f"{flag}: {message} (got {_shown(error.get('input'))})")
    return "\n".join(lines)
