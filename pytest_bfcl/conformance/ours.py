"""pytest-bfcl on the same result directory, in a subprocess started from an empty directory
(so no project's conftest, ini file or cache takes part), reading its junit file back."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from pytest_bfcl.conformance.junit import JunitVerdicts, read_junit_verdicts
from pytest_bfcl.conformance.reference import SetupError
from pytest_bfcl.files import read_file_tail

# pytest's exit statuses that still mean "the run happened": all passed, some failed.
_RUN_COMPLETED = (0, 1)


class OursRun(BaseModel):
    verdicts: JunitVerdicts
    junit_path: Path
    report_path: Path
    seconds: float


def pytest_command(
    model_dir: Path,
    mode: str,
    categories: Sequence[str],
    workdir: Path,
    underscore_to_dot: bool | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-header",
        "-rN",
        f"--bfcl-model=replay:{model_dir}",
        f"--bfcl-mode={mode}",
        f"--bfcl-category={','.join(categories)}",
        f"--bfcl-report={workdir / 'pytest-bfcl-report.json'}",
        f"--junitxml={workdir / 'pytest-bfcl-junit.xml'}",
    ]
    if underscore_to_dot is not None:
        cmd.append(f"--bfcl-underscore-to-dot={'true' if underscore_to_dot else 'false'}")
    return cmd + list(extra_args)


def run_ours(
    model_dir: Path,
    mode: str,
    categories: Sequence[str],
    workdir: Path,
    underscore_to_dot: bool | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 3600,
) -> OursRun:
    """Score the results with pytest-bfcl's replay model; exit statuses other than "passed"
    and "tests failed" are a set-up problem."""
    cmd = pytest_command(model_dir, mode, categories, workdir, underscore_to_dot, extra_args)
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)  # the user's defaults would change what runs
    started = time.monotonic()
    log = workdir / "pytest-bfcl.log"
    try:
        with log.open("w", encoding="utf-8") as out:
            proc = subprocess.run(
                cmd,
                cwd=workdir,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
                timeout=timeout,
            )
    except subprocess.TimeoutExpired as exc:
        raise SetupError(f"pytest-bfcl ran past {timeout:.0f} s") from exc
    seconds = time.monotonic() - started
    junit = workdir / "pytest-bfcl-junit.xml"
    if proc.returncode not in _RUN_COMPLETED or not junit.is_file():
        text = read_file_tail(log, 64 << 10).decode("utf-8", errors="replace")
        tail = "\n".join(text.splitlines()[-20:])
        raise SetupError(f"pytest-bfcl did not complete (exit {proc.returncode}):\n{tail}")
    return OursRun(
        verdicts=read_junit_verdicts(junit),
        junit_path=junit,
        report_path=workdir / "pytest-bfcl-report.json",
        seconds=seconds,
    )
