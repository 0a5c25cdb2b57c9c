"""``python -m pytest_bfcl.merge_baselines OUT IN IN [IN ...]``: one baseline from several
recorded runs of the same model, each entry's passes and samples added up, so the gate compares
a run with pass rates instead of one draw (see docs/gating.md, "How the gate decides")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_bfcl.files import output_problem, write_json_atomic
from pytest_bfcl.gate import (
    BaselineError,
    SignatureError,
    load_baseline,
    merge_baselines,
    signed,
    signing_key,
)
from pytest_bfcl.printable import printable
from pytest_bfcl.wording import count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_bfcl.merge_baselines",
        description="Merge baselines recorded from several runs of one model into one.",
    )
    parser.add_argument("output", type=Path, help="the merged baseline to write")
    parser.add_argument("inputs", type=Path, nargs="+", help="baselines saved by the runs")
    parser.add_argument(
        "--key-env",
        metavar="VAR",
        help="environment variable with the baseline signing key: every input must be signed "
        "with it, and the merged baseline is",
    )
    args = parser.parse_args(argv)
    problem = output_problem(args.output, args.inputs)  # before any work: one line
    if problem is not None:
        print(f"merge_baselines: cannot write {args.output}: it {problem}", file=sys.stderr)
        return 2
    try:
        key = signing_key(args.key_env, "--key-env")
        merged = merge_baselines([load_baseline(path, key) for path in args.inputs])
        write_json_atomic(args.output, signed(merged, key))
    except (BaselineError, SignatureError, OSError, ValueError) as exc:
        # one line, the inputs' fields it quotes escaped and bounded
        print(printable(f"merge_baselines: {' '.join(str(exc).split())}", 1000), file=sys.stderr)
        return 2
    samples = merged["metadata"]["samples"]
    print(
        f"{args.output}: {count(len(merged['verdicts']), 'entry', 'entries')}, at least "
        f"{count(samples, 'sample')} each, from {count(len(args.inputs), 'baseline')}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
