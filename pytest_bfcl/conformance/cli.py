"""``python -m pytest_bfcl.conformance``: the official evaluator and pytest-bfcl on one result
directory, compared entry by entry (``... conformance requests``: what both harnesses send a
model, compared request by request; see :mod:`.requests_cli`).

Exit status: 0 when every entry agrees, 1 when some differ, 2 for a usage or set-up problem
(reported on one line; longer details, such as a failing command's output, go to a log file
named in that line).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import get_args

from pytest_bfcl.conformance.arguments import OneLineParser, path_problem, refuse, seconds
from pytest_bfcl.conformance.compare import Comparison, compare_verdicts, render_comparison
from pytest_bfcl.conformance.junit import JunitError
from pytest_bfcl.conformance.ours import run_ours
from pytest_bfcl.conformance.reference import (
    SetupError,
    default_venv_dir,
    ensure_venv,
    handler_key_names,
    run_reference,
)
from pytest_bfcl.conformance.results import (
    ResultsError,
    StoredResult,
    locate_model_dir,
    read_results,
)
from pytest_bfcl.conformance.score_files import (
    EntryVerdict,
    ScoreFileError,
    read_score_dir,
    reference_verdicts,
)
from pytest_bfcl.dataset.categories import FORMAT_SENSITIVITY
from pytest_bfcl.dataset.fetch import DatasetError, default_cache_dir, ensure_pinned_data
from pytest_bfcl.dataset.registry import LeaderboardModel, load_model_registry, lookup
from pytest_bfcl.scoring import Mode

EXIT_AGREE, EXIT_DIFFER, EXIT_SETUP = 0, 1, 2
_SETUP_ERRORS = (SetupError, ResultsError, ScoreFileError, JunitError, DatasetError, ValueError)


class UsageError(ValueError):
    """A problem with the command line."""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m pytest_bfcl.conformance",
        description="Score a result directory with the official BFCL evaluator and with "
        "pytest-bfcl, and compare their verdicts entry by entry.",
    )
    parser.add_argument(
        "results_dir", type=Path, help="<root>/<model dir>/<group>/... or the model dir"
    )
    parser.add_argument(
        "--mode",
        choices=get_args(Mode),
        help="pytest-bfcl's mode (default: the way the evaluator decodes the registry's model)",
    )
    parser.add_argument(
        "--leaderboard-model",
        help="the registry name to evaluate as (default: the model directory's name)",
    )
    parser.add_argument(
        "--categories",
        nargs="+",
        help="categories to compare, space- or comma-separated (default: every result file)",
    )
    parser.add_argument(
        "--venv", type=Path, help=f"evaluator virtualenv (default {default_venv_dir()})"
    )
    parser.add_argument(
        "--pip-arg",
        action="append",
        default=[],
        help="extra argument or requirement for building the virtualenv (repeatable), "
        "e.g. torch==2.13.0 to take a CPU build you have locally",
    )
    parser.add_argument("--json", type=Path, dest="json_out", help="write the comparison as JSON")
    parser.add_argument(
        "--keep", type=Path, help="keep the evaluator's project root and pytest-bfcl's files here"
    )
    parser.add_argument("--timeout", type=seconds, default=3600, help="seconds per run (3600)")
    return parser


def _selected_categories(
    stored: dict[str, list[StoredResult]], wanted: Sequence[str] | None
) -> dict[str, list[StoredResult]]:
    if not wanted:
        return {name: entries for name, entries in stored.items() if name != FORMAT_SENSITIVITY}
    names = [name for item in wanted for name in item.split(",") if name]
    if FORMAT_SENSITIVITY in names:
        raise UsageError(f"{FORMAT_SENSITIVITY} is not compared (its score file differs)")
    missing = [name for name in names if name not in stored]
    if missing:
        raise UsageError(f"no result file for {', '.join(missing)} (have: {', '.join(stored)})")
    return {name: stored[name] for name in names}


def _unpacked_root() -> Path:
    root = ensure_pinned_data().unpacked_root
    if root is None:
        raise SetupError("the pinned release has no unpacked sources")
    return root


def _resolve_model(results_dir: Path, name: str | None) -> tuple[Path, LeaderboardModel]:
    registry = load_model_registry(_unpacked_root())
    wanted_dir = lookup(name, registry).result_dir_name if name else None
    model_dir = locate_model_dir(results_dir, wanted_dir)
    return model_dir, lookup(name or model_dir.name, registry)


def _reference_side(
    score_dir: Path, stored: dict[str, list[StoredResult]], failed: dict[str, str]
) -> tuple[dict[str, dict[str, EntryVerdict]], dict[str, str]]:
    scores = read_score_dir(score_dir) if score_dir.is_dir() else {}
    verdicts: dict[str, dict[str, EntryVerdict]] = {}
    problems = {category: f"the evaluator failed: {tail}" for category, tail in failed.items()}
    for category, entries in stored.items():
        if category not in scores:
            continue
        try:
            verdicts[category] = reference_verdicts(scores[category], [e.id for e in entries])
        except ScoreFileError as exc:
            problems[category] = str(exc)
    return verdicts, problems


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def compare_results_dir(args: argparse.Namespace, workdir: Path) -> Comparison:
    """The whole comparison, with files under ``workdir``."""
    results_dir = args.results_dir.expanduser().resolve()
    model_dir, model = _resolve_model(results_dir, args.leaderboard_model)
    expected = model.decodes_like or model.mode
    mode = args.mode or expected
    if model.decodes_like is None:
        _say(
            f"warning: the evaluator decodes {model.name}'s output with its own decoder "
            f"({model.decoder or model.handler}); pytest-bfcl uses the standard {mode} "
            "decoding, so some differences are expected"
        )
    elif mode != expected:
        _say(
            f"warning: the evaluator decodes {model.name}'s output in {expected} mode, "
            f"pytest-bfcl in {mode} mode"
        )
    stored = _selected_categories(read_results(model_dir), args.categories)
    python = ensure_venv(args.venv, args.pip_arg, _say)
    reference = run_reference(
        python,
        workdir / "reference",
        model_dir,
        model.name,
        list(stored),
        args.timeout,
        handler_key_names(_unpacked_root()),
    )
    ref_verdicts, problems = _reference_side(
        reference.score_dir, stored, reference.failed_categories
    )
    ours_dir = workdir / "ours"
    ours_dir.mkdir(parents=True, exist_ok=True)
    ours = run_ours(
        model_dir, mode, list(stored), ours_dir, model.underscore_to_dot, timeout=args.timeout
    )
    categories, differences = compare_verdicts(stored, ref_verdicts, ours.verdicts, problems)
    return Comparison(
        results_dir=str(results_dir),
        model_dir=model_dir.name,
        leaderboard_model=model.name,
        mode=mode,
        categories=categories,
        differences=differences,
        reference_seconds=reference.seconds,
        ours_seconds=ours.seconds,
    )


def _details_log() -> Path:
    return default_cache_dir() / "conformance-last-error.log"


def _report_setup_problem(exc: Exception) -> None:
    """One line on stderr; a multi-line message goes to a log file named in that line."""
    text = str(exc).strip() or type(exc).__name__
    first, _, rest = text.partition("\n")
    if rest:
        log = _details_log()
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(text + "\n", encoding="utf-8")
        first = f"{first} (details: {log})"
    print(f"conformance: error: {first}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        comparison = compare_results_dir(args, args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="bfcl-conformance-") as tmp:
            comparison = compare_results_dir(args, Path(tmp))
    print(render_comparison(comparison))
    if args.json_out:
        args.json_out.write_text(
            json.dumps(comparison.as_json(), indent=2) + "\n", encoding="utf-8"
        )
    return EXIT_AGREE if comparison.agrees else EXIT_DIFFER


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["requests"]:  # the request comparison (pytest_bfcl.conformance.requests_cli)
        from pytest_bfcl.conformance.requests_cli import main as compare_requests

        return compare_requests(argv[1:])
    if argv[:1] == ["handlers"]:  # the open-weight handlers (.handlers_cli)
        from pytest_bfcl.conformance.handlers_cli import main as compare_handlers

        return compare_handlers(argv[1:])
    args = build_parser().parse_args(argv)
    if (problem := path_problem(args)) is not None:
        return refuse("conformance", problem)
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        print(f"conformance: error: --keep {args.keep} is not empty", file=sys.stderr)
        return EXIT_SETUP
    try:
        return _run(args)
    except _SETUP_ERRORS as exc:
        _report_setup_problem(exc)
        return EXIT_SETUP
    except KeyboardInterrupt:
        print("conformance: interrupted", file=sys.stderr)
        return EXIT_SETUP
