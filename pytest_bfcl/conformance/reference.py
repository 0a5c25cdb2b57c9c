"""The official evaluator, run in an isolated virtualenv of its own.

The virtualenv holds the pinned ``bfcl-eval`` (and ``soundfile``, without which its command line
does not start: one of the model handlers it imports at start-up needs it). It is built once
per release and reused; a marker file written after a successful start-up check says it is
complete, so an interrupted build is rebuilt instead of half-used.

The evaluator reads results from ``$BFCL_PROJECT_ROOT/result/<model dir>/`` and writes score
files to ``$BFCL_PROJECT_ROOT/score/<model dir>/`` (it also creates both folders on import,
next to its own package unless the variable is set), so every run gets a fresh temporary
project root holding a copy of the results.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from pytest_bfcl.dataset.fetch import default_cache_dir, load_lock

PROJECT_ROOT_ENV = "BFCL_PROJECT_ROOT"
# Imported at start-up by a handler module but not declared by the distribution.
STARTUP_EXTRAS = ("soundfile",)
_MARKER = ".pytest-bfcl-conformance"
_LOG_TAIL_LINES = 25


class SetupError(RuntimeError):
    """The evaluator's virtualenv could not be built or started, or a run could not be made."""


class ReferenceRun(BaseModel):
    """One run of the evaluator: where its scores went and what it said."""

    score_dir: Path  # <project root>/score/<model dir>
    returncode: int
    seconds: float
    log_tail: str
    failed_categories: dict[str, str] = {}  # category -> last lines of its failed run


def pinned_version() -> str:
    return load_lock().version


def default_venv_dir() -> Path:
    return default_cache_dir() / f"conformance-venv-{pinned_version()}"


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _tail(text: str, lines: int = _LOG_TAIL_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run(cmd: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=False, **kwargs)


def evaluator_env(project_root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env[PROJECT_ROOT_ENV] = str(project_root)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.pop("PYTHONPATH", None)  # keep our tree off the evaluator's path
    return env


def startup_problem(python: Path) -> str | None:
    """None when ``python -m bfcl_eval --help`` works, else why not (its last lines)."""
    with tempfile.TemporaryDirectory(prefix="bfcl-conformance-check-") as tmp:
        proc = _run(
            [str(python), "-m", "bfcl_eval", "--help"],
            env=evaluator_env(Path(tmp)),
            cwd=tmp,
            timeout=600,
        )
    if proc.returncode == 0 and "evaluate" in proc.stdout:
        return None
    return _tail(proc.stdout + proc.stderr) or f"exit status {proc.returncode}"


def _explain_startup(problem: str) -> str:
    hint = ""
    if "No module named" in problem:
        module = problem.split("No module named", 1)[1].strip().strip("'\"").split("'")[0]
        hint = f" (a module it imports at start-up is missing: add it with --pip-arg {module})"
    return f"the official evaluator does not start{hint}:\n{problem}"


def build_venv(venv: Path, pip_args: Sequence[str] = ()) -> None:
    """Create the virtualenv and install the pinned evaluator into it (network to the package
    index once; the user's pip configuration applies)."""
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    made = _run([sys.executable, "-m", "venv", str(venv)])
    if made.returncode != 0:
        raise SetupError(f"could not create a virtualenv at {venv}:\n{_tail(made.stderr)}")
    requirement = f"{load_lock().distribution}=={pinned_version()}"
    cmd = [
        str(venv_python(venv)),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        requirement,
        *STARTUP_EXTRAS,
        *pip_args,
    ]
    installed = _run(cmd)
    if installed.returncode != 0:
        raise SetupError(
            f"`pip install {' '.join(cmd[5:])}` failed (exit {installed.returncode}); "
            f"the evaluator needs the package index once:\n"
            f"{_tail(installed.stdout + installed.stderr)}"
        )


def ensure_venv(venv: Path | None = None, pip_args: Sequence[str] = ()) -> Path:
    """The evaluator's Python, building its virtualenv on first use; checked to start."""
    venv = venv or default_venv_dir()
    python = venv_python(venv)
    marker = venv / _MARKER
    if marker.is_file() and python.is_file():
        return python
    if not python.is_file() or startup_problem(python) is not None:
        build_venv(venv, pip_args)
        problem = startup_problem(python)
        if problem is not None:
            raise SetupError(_explain_startup(problem))
    marker.write_text(pinned_version(), encoding="utf-8")
    return python


def prepare_project_root(project_root: Path, model_dir: Path, result_dir_name: str) -> Path:
    """Copy the results to where the evaluator reads them, under the registry's dir name."""
    target = project_root / "result" / result_dir_name
    shutil.copytree(model_dir, target, ignore=shutil.ignore_patterns("*score*"))
    (project_root / "score").mkdir(parents=True, exist_ok=True)
    return target


def _evaluate(
    python: Path, project_root: Path, model_name: str, categories: Sequence[str], timeout: float
) -> subprocess.CompletedProcess[str]:
    cmd = [
        str(python),
        "-m",
        "bfcl_eval",
        "evaluate",
        "--model",
        model_name,
        "--test-category",
        ",".join(categories),
        "--partial-eval",  # entries missing from a result file are left out, not an error
    ]
    try:
        return _run(cmd, env=evaluator_env(project_root), cwd=project_root, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise SetupError(
            f"the evaluator ran past {timeout:.0f} s on {', '.join(categories)}"
        ) from exc


def _scored_categories(score_dir: Path) -> set[str]:
    return {
        path.name.removeprefix("BFCL_v4_").removesuffix("_score.json")
        for path in score_dir.rglob("BFCL_v4_*_score.json")
    }


def run_reference(
    python: Path,
    project_root: Path,
    model_dir: Path,
    model_name: str,
    categories: Sequence[str],
    timeout: float = 3600,
) -> ReferenceRun:
    """Evaluate the results of ``model_dir`` as the registry's ``model_name``.

    One run for all categories; when it fails, the categories left without a score file are
    run one by one, so a crash in one category does not hide the others.
    """
    dir_name = model_name.replace("/", "_")
    prepare_project_root(project_root, model_dir, dir_name)
    score_dir = project_root / "score" / dir_name
    started = time.monotonic()
    proc = _evaluate(python, project_root, model_name, categories, timeout)
    failed: dict[str, str] = {}
    if proc.returncode != 0:
        for category in categories:
            if category in _scored_categories(score_dir):
                continue
            alone = _evaluate(python, project_root, model_name, [category], timeout)
            if alone.returncode != 0 or category not in _scored_categories(score_dir):
                failed[category] = _tail(alone.stdout + alone.stderr, 6)
    return ReferenceRun(
        score_dir=score_dir,
        returncode=proc.returncode,
        seconds=time.monotonic() - started,
        log_tail=_tail(proc.stdout + proc.stderr),
        failed_categories=failed,
    )
