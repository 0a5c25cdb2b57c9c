"""What a run asks and how it scores: the model, the mode, the categories, the leaderboard
model whose conventions it follows, and the scoring rules."""

from __future__ import annotations

from pytest_bfcl import option_rules as rules
from pytest_bfcl.options.base import Option

SCORING_OPTIONS: tuple[Option, ...] = (
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
)
