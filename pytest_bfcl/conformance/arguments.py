"""The conformance tools' command lines checked before any work: a bad value is one line
(``prog: error: ...``, exit status 2), never a traceback, and never found after an hour of
runs (a ``--json`` that cannot be written is refused at the start)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from pytest_bfcl.conformance.reference import venv_problem

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its usage errors on one line (``--help`` still shows the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def count(text: str) -> int:
    """A number of entries: 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; give 0 (every entry) or more")
    return value


def seconds(text: str) -> float:
    """A time limit: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def output_file_problem(path: Path | None, flag: str) -> str | None:
    """Why a file to be written at the end cannot be: a folder, or no folder to hold it."""
    if path is None:
        return None
    if path.is_dir():
        return f"{flag} {path} is a folder; name a file"
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        return f"{flag} {path}: the folder {parent} does not exist"
    return None


def path_problem(args: argparse.Namespace) -> str | None:
    """The first problem of the paths given (``--venv``, ``--json``, ``--keep``), or None."""
    keep = getattr(args, "keep", None)
    checks = [
        venv_problem(args.venv) if args.venv is not None else None,
        output_file_problem(args.json_out, "--json"),
        f"--keep {keep} is not a folder" if keep is not None and keep.is_file() else None,
    ]
    return next((problem for problem in checks if problem), None)


def refuse(prog: str, problem: str) -> int:
    print(f"{prog}: error: {problem}", file=sys.stderr)
    return EXIT_USAGE
