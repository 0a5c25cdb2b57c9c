"""Run the conformance tool on every shared reference corpus and print one table.

Not part of any test run (its name does not start with ``test_``). Run it by hand:

    .venv/bin/python benchmarks/conformance_all_corpora.py [SHARED_REFERENCE_DIR] [--pip-arg ARG]

``SHARED_REFERENCE_DIR`` defaults to ``$BFCL_SHARED_DIR/reference`` or ``../shared/reference``
beside the checkout. A corpus is any directory two levels below it that holds a result
directory in the leaderboard's layout (``corpus/v0``, ``corpus/v1``, ``corpus2/p0``,
``corpus2/a0``). The corpora run one after the other (each runs the official evaluator, then
pytest-bfcl); the first builds the evaluator's virtualenv if it is not there yet. Each
corpus's full comparison is kept as JSON under ``.benchmarks/conformance/``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from pytest_bfcl.conformance.results import is_model_dir

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / ".benchmarks" / "conformance"


class CorpusRow(BaseModel):
    corpus: str
    exit_status: int
    seconds: float
    model: str = "-"
    mode: str = "-"
    compared: int = 0
    verdict_agreement: float | None = None
    error_type_agreement: float | None = None
    differing: int = 0
    evaluator_seconds: float | None = None
    ours_seconds: float | None = None
    problem: str = ""


def default_shared_reference() -> Path:
    if os.environ.get("BFCL_SHARED_DIR"):
        return Path(os.environ["BFCL_SHARED_DIR"]) / "reference"
    return ROOT.parent / "shared" / "reference"


def find_corpora(reference: Path) -> list[Path]:
    """Directories holding one or more model directories with result files."""
    found = []
    for candidate in sorted(p for p in reference.glob("*/*") if p.is_dir()):
        if any(child.is_dir() and is_model_dir(child) for child in candidate.iterdir()):
            found.append(candidate)
    return found


def run_corpus(corpus: Path, reference: Path, pip_args: list[str]) -> CorpusRow:
    name = str(corpus.relative_to(reference))
    out = OUT_DIR / f"{name.replace('/', '_')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pytest_bfcl.conformance", str(corpus), "--json", str(out)]
    cmd += [f"--pip-arg={arg}" for arg in pip_args]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if proc.returncode == 2 or not out.is_file():
        return CorpusRow(
            corpus=name, exit_status=proc.returncode, seconds=seconds, problem=proc.stderr.strip()
        )
    data = json.loads(out.read_text(encoding="utf-8"))
    total = data["total"]
    return CorpusRow(
        corpus=name,
        exit_status=proc.returncode,
        seconds=seconds,
        model=data["leaderboard_model"],
        mode=data["mode"],
        compared=total["compared"],
        verdict_agreement=total["verdict_agreement"],
        error_type_agreement=total["error_type_agreement"],
        differing=len(data["differences"]),
        evaluator_seconds=data["reference_seconds"],
        ours_seconds=data["ours_seconds"],
        problem=total["problem"] or "",
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}%"


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def render(rows: list[CorpusRow]) -> str:
    header = (
        f"{'corpus':<12} {'model':<24} {'mode':<6} {'compared':>8} {'verdicts':>9} "
        f"{'err type':>9} {'differ':>6} {'eval s':>6} {'ours s':>6} {'total s':>7}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row.corpus:<12} {row.model:<24} {row.mode:<6} {row.compared:>8} "
            f"{_pct(row.verdict_agreement):>9} {_pct(row.error_type_agreement):>9} "
            f"{row.differing:>6} {_secs(row.evaluator_seconds):>6} {_secs(row.ours_seconds):>6} "
            f"{_secs(row.seconds):>7}"
        )
        if row.problem:
            lines.append(f"  {row.problem}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", nargs="?", type=Path, default=default_shared_reference())
    parser.add_argument("--pip-arg", action="append", default=[])
    args = parser.parse_args(argv)
    corpora = find_corpora(args.reference)
    if not corpora:
        print(f"no corpora under {args.reference}", file=sys.stderr)
        return 2
    rows = []
    for corpus in corpora:
        print(f"running {corpus} ...", file=sys.stderr, flush=True)
        rows.append(run_corpus(corpus, args.reference, args.pip_arg))
    print(render(rows))
    return max(row.exit_status for row in rows)


if __name__ == "__main__":
    sys.exit(main())
