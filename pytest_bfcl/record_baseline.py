"""``python -m pytest_bfcl.record_baseline COMMITTED FRESH``: after a request-settings change
has landed (declared with ``--bfcl-settings-change`` in its pull request), the default branch's
run records the new baseline: FRESH (the run's saved baseline) replaces COMMITTED when their
request settings differ, so the next pull request is compared with runs of the settings it
sends. When they are alike, COMMITTED is kept (a bar moves only through a pull request) and
nothing is written. It prints what it did in one line; exit 0 either way, 2 on a bad file."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from pytest_bfcl.gate import (
    BaselineError,
    SignatureError,
    load_baseline,
    setting_differences,
    signing_key,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_bfcl.record_baseline",
        description="Replace the committed baseline with a fresh run's when their request "
        "settings differ (a declared settings change has landed); keep it otherwise.",
    )
    parser.add_argument("committed", type=Path, help="the baseline the repository keeps")
    parser.add_argument("fresh", type=Path, help="the baseline this run saved")
    parser.add_argument(
        "--key-env", metavar="VAR", help="environment variable with the baseline signing key"
    )
    args = parser.parse_args(argv)
    try:
        key = signing_key(args.key_env, "--key-env")
        committed = load_baseline(args.committed, key)
        fresh = load_baseline(args.fresh, key)
        changes = setting_differences(committed.metadata, fresh.metadata)
        if changes:
            shutil.copyfile(args.fresh, args.committed)
    except (BaselineError, SignatureError, OSError) as exc:
        print(f"record_baseline: {exc}", file=sys.stderr)
        return 2
    if not changes:
        print(f"record_baseline: {args.committed} kept (request settings as this run's)")
        return 0
    print(
        f"record_baseline: {args.committed} replaced by {args.fresh}: "
        + "; ".join(c.line for c in changes)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
