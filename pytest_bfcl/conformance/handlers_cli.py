"""``python -m pytest_bfcl.conformance handlers``: the leaderboard's open-weight handlers of
the pinned release, run in the conformance virtualenv, and pytest-bfcl's families
(:mod:`pytest_bfcl.handlers`) on the same cases (:mod:`.handler_cases`): every prompt of a
single-turn entry and of a two-turn conversation, and the decoders on a corpus of raw answers,
compared one by one. ``--write FILE`` keeps the release's outputs as goldens (the tests compare
pytest-bfcl with them without the release installed).

Exit status: 0 when everything is identical, 1 when something differs, 2 for a set-up problem."""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_bfcl.conformance import handler_script
from pytest_bfcl.conformance.arguments import OneLineParser
from pytest_bfcl.conformance.handler_cases import build_cases, normalised, ours
from pytest_bfcl.conformance.reference import SetupError, ensure_venv
from pytest_bfcl.dataset.fetch import DatasetError, ensure_pinned_data
from pytest_bfcl.dataset.texts import load_texts
from pytest_bfcl.kinds import open_dataset

EXIT_IDENTICAL, EXIT_DIFFER, EXIT_SETUP = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m pytest_bfcl.conformance handlers",
        description="Compare the prompts and decoding of the leaderboard's open-weight handlers "
        "with pytest-bfcl's, case by case.",
    )
    parser.add_argument(
        "--python",
        type=Path,
        help="a Python with the pinned bfcl-eval installed (default: the conformance "
        "virtualenv, built on first use)",
    )
    parser.add_argument("--write", type=Path, help="write the release's outputs here (goldens)")
    return parser


def reference_outputs(python: Path, cases: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
    """What the release's own handlers render and decode on the cases."""
    script = Path(handler_script.__file__)
    done = subprocess.run(
        [str(python), str(script)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise SetupError(f"the release's handlers did not run under {python}: {tail[0]}")
    outputs: dict[str, Any] = json.loads(done.stdout)
    return normalised(outputs)


def differences(reference: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """One paragraph per case that differs: the first differing prompt's lines, or the
    decoded outcomes."""
    found = []
    for key in reference:
        want, got = reference[key], mine.get(key)
        if want == got:
            continue
        lines = [f"{key}: differs"]
        for index, (a, b) in enumerate(
            zip(want.get("prompts", []), (got or {}).get("prompts", []), strict=False)
        ):
            if a != b:
                diff = difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=1)
                lines.append(f"  prompt {index}:")
                lines.extend("    " + line for line in list(diff)[2:14])
                break
        if want.get("decoded") != (got or {}).get("decoded"):
            lines.append(
                f"  decoded: release {want.get('decoded')} | ours {(got or {}).get('decoded')}"
            )
        found.append("\n".join(lines))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        source = ensure_pinned_data()
        assert source.unpacked_root is not None
        dataset, texts = open_dataset(source), load_texts(source.unpacked_root)
        cases = build_cases(dataset, texts)
        python = args.python or ensure_venv(progress=lambda line: print(line, file=sys.stderr))
        reference = reference_outputs(python, cases)
    except (SetupError, DatasetError, OSError, subprocess.SubprocessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SETUP
    mine = normalised(json.loads(json.dumps(ours(cases, source.unpacked_root, texts, dataset))))
    if args.write:
        args.write.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n")
    found = differences(reference, mine)
    for paragraph in found:
        print(paragraph)
    print(f"{len(cases)} cases: {len(cases) - len(found)} identical, {len(found)} differ")
    return EXIT_DIFFER if found else EXIT_IDENTICAL
