"""``python -m pytest_bfcl.conformance requests``: what the official harness and pytest-bfcl
send a model, compared request by request on a slice of each category, both pointed at one
local server that answers from the request alone (:mod:`pytest_bfcl.testing.scripted_answers`).

Exit status: 0 when every request is identical (key order aside), 1 when some differ, 2 for a
usage or set-up problem."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from pytest_bfcl.conformance.arguments import OneLineParser, count, path_problem, refuse, seconds
from pytest_bfcl.conformance.reference import (
    SetupError,
    default_venv_dir,
    ensure_venv,
    handler_key_names,
)
from pytest_bfcl.conformance.request_diff import CategoryRequests, compare_category, render_requests
from pytest_bfcl.conformance.request_runs import (
    check_comparable,
    choose_slice,
    official_ids,
    run_official,
    run_ours,
)
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.fetch import DatasetError, ensure_pinned_data
from pytest_bfcl.dataset.registry import LeaderboardModel, load_model_registry, lookup
from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.testing.recording_server import RecordingServer
from pytest_bfcl.testing.scripted_answers import BEHAVIOURS, SHAPES, Behaviour, Script, Shape

EXIT_IDENTICAL, EXIT_DIFFER, EXIT_SETUP = 0, 1, 2
# One category of every kind the harnesses share (web search needs the live web).
DEFAULT_CATEGORIES = (
    "simple_python",
    "simple_java",
    "parallel_multiple",
    "live_simple",
    "live_relevance",
    "live_irrelevance",
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_long_context",
    "memory_kv",
    "format_sensitivity",
)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m pytest_bfcl.conformance requests",
        description="Run the official harness and pytest-bfcl against one local recording "
        "server and compare the requests they send, category by category.",
    )
    parser.add_argument(
        "--leaderboard-model",
        required=True,
        help="the registry name both harnesses follow (e.g. gpt-4.1-2025-04-14-FC for the "
        "Responses API, openbmb/MiniCPM-SALA-FC for chat completions)",
    )
    parser.add_argument(
        "--categories",
        nargs="+",
        help="categories, space- or comma-separated (default: one of every kind; "
        "format_sensitivity only for prompting models)",
    )
    parser.add_argument(
        "--per-category",
        type=count,
        default=5,
        help="entries per category, spread evenly (default 5; 0: every entry)",
    )
    parser.add_argument(
        "--answers",
        default=",".join(BEHAVIOURS),
        help=f"what the server answers with, comma-separated from {', '.join(BEHAVIOURS)}",
    )
    parser.add_argument(
        "--shapes",
        default=",".join(SHAPES),
        help=f"the answers' shapes, comma-separated from {', '.join(SHAPES)}",
    )
    parser.add_argument(
        "--venv",
        type=Path,
        help=f"the official harness's virtualenv (default {default_venv_dir()})",
    )
    parser.add_argument(
        "--pip-arg", action="append", default=[], help="extra argument for building the virtualenv"
    )
    parser.add_argument(
        "--tokenizer",
        type=Path,
        help="open-weight entries: the checkpoint folder both harnesses count prompt tokens "
        "with (tokenizer.json, tokenizer_config.json, config.json; tools/qwen_checkpoint.py "
        "rebuilds Qwen's); default: a word-level tokenizer made for the run",
    )
    parser.add_argument("--json", type=Path, dest="json_out", help="write the comparison as JSON")
    parser.add_argument("--keep", type=Path, help="keep both harnesses' files here")
    parser.add_argument("--timeout", type=seconds, default=3600, help="seconds per run (3600)")
    return parser


def _words(text: str, allowed: Sequence[str], what: str) -> list[str]:
    words = [w.strip() for w in text.split(",") if w.strip()]
    unknown = [w for w in words if w not in allowed]
    if unknown or not words:
        raise SetupError(
            f"--{what}: {', '.join(unknown) or 'none given'}; use {', '.join(allowed)}"
        )
    return words


def selected_categories(wanted: Sequence[str] | None, model: LeaderboardModel) -> list[str]:
    """The categories asked for, each checked comparable with this model."""
    if wanted:
        names = [n for item in wanted for n in item.split(",") if n]
    else:
        names = [
            c
            for c in DEFAULT_CATEGORIES
            if model.mode == "prompt" or CATEGORIES[c].kind is not Kind.FORMAT_SENSITIVITY
        ]
    for name in names:
        check_comparable(name)
        if model.mode == "fc" and CATEGORIES[name].kind is Kind.FORMAT_SENSITIVITY:
            raise SetupError(f"{name} is run for prompting models only; {model.name} is fc")
    return names


def compare_requests(args: argparse.Namespace, workdir: Path) -> list[CategoryRequests]:
    """Both harnesses on every selected category, compared."""
    source = ensure_pinned_data()
    if source.unpacked_root is None:
        raise SetupError("the pinned release has no unpacked sources")
    model = lookup(args.leaderboard_model, load_model_registry(source.unpacked_root))
    categories = selected_categories(args.categories, model)
    script = Script(
        tuple(cast(list[Behaviour], _words(args.answers, BEHAVIOURS, "answers"))),
        tuple(cast(list[Shape], _words(args.shapes, SHAPES, "shapes"))),
    )
    python = ensure_venv(args.venv, args.pip_arg, _say)
    dataset = open_dataset(source)
    keys = handler_key_names(source.unpacked_root)
    sent_name = model.api_model_name or model.name
    local, extra = None, []
    if model.wire_format == "completions":  # asked as a local model: the checkpoint's path
        local = (args.tokenizer or word_level_checkpoint(workdir / "checkpoint")).resolve()
        sent_name, extra = str(local), [f"--bfcl-tokenizer={local}"]
    results = []
    with RecordingServer(script) as server:
        for category in categories:
            ids = choose_slice(dataset, category, args.per_category or None)
            _say(f"{category}: {len(ids)} entries, pytest-bfcl then the official harness")
            ours = run_ours(
                server, sent_name, model.name, category, ids, workdir, args.timeout, extra
            )
            official = run_official(
                python,
                server,
                model.name,
                category,
                official_ids(dataset, category, ids),
                workdir,
                keys,
                args.timeout,
                local_model=local,
            )
            result = compare_category(category, ours.requests, official.requests)
            problems = [p for p in (official.problem, ours.problem) if p]
            results.append(result.model_copy(update={"problem": "; ".join(problems) or None}))
    return results


def word_level_checkpoint(folder: Path, context: int = 8192) -> Path:
    """A checkpoint folder both harnesses read the same way: a tokenizer that counts words and
    punctuation, and a context window short enough that ``max_tokens`` follows the prompt."""
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers
    except ImportError:
        raise SetupError(
            "open-weight entries need a tokenizer: give --tokenizer PATH, or install the "
            "tokenizers package (pip install 'pytest-bfcl[handlers]')"
        ) from None
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    model_config = {"model_type": "llama", "max_position_embeddings": context}
    (folder / "config.json").write_text(json.dumps(model_config), encoding="utf-8")
    return folder


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        results = compare_requests(args, args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="bfcl-requests-") as tmp:
            results = compare_requests(args, Path(tmp))
    header = (
        f"requests sent following {args.leaderboard_model}: "
        "pytest-bfcl against the official harness"
    )
    print(render_requests(results, header))
    if args.json_out:
        payload = {
            "leaderboard_model": args.leaderboard_model,
            "categories": [r.model_dump() for r in results],
        }
        args.json_out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return EXIT_IDENTICAL if all(r.agrees for r in results) else EXIT_DIFFER


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (problem := path_problem(args)) is not None:
        return refuse("conformance requests", problem)
    try:
        return _run(args)
    except (SetupError, DatasetError, ValueError) as exc:
        print(f"conformance requests: error: {str(exc).strip()}", file=sys.stderr)
        return EXIT_SETUP
    except KeyboardInterrupt:
        print("conformance requests: interrupted", file=sys.stderr)
        return EXIT_SETUP
