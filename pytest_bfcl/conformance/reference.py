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

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pytest_bfcl.dataset.fetch import default_cache_dir, load_lock
from pytest_bfcl.files import read_small_text

PROJECT_ROOT_ENV = "BFCL_PROJECT_ROOT"
# Imported at start-up by a handler module but not declared by the distribution.
STARTUP_EXTRAS = ("soundfile",)
_MARKER = ".pytest-bfcl-conformance"
# Written as soon as this tool has created a virtualenv: only a folder holding it (or the
# marker above) is ever removed to be rebuilt.
_MADE = ".pytest-bfcl-made"
KEY_PLACEHOLDER = "placeholder-evaluation-sends-no-request"
_ENV_READERS = frozenset({"os.getenv", "os.environ.get", "getenv", "environ.get"})
# What the evaluator's process inherits from ours: enough to run Python, nothing else.
_PASSED_THROUGH = (
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "HF_HOME",
    "XDG_CACHE_HOME",
)
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


def _run(cmd: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=False, **kwargs)


def _env_names_read(source: str) -> set[str]:
    """Names passed as literals to ``os.getenv``/``os.environ.get``/``os.environ[...]``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in _ENV_READERS and node.args:
            first = node.args[0]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            first = node.slice
        else:
            continue
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
    return names


@cache
def handler_key_names(unpacked_root: Path) -> tuple[str, ...]:
    """The API-key variables the release's model handlers read when they are constructed.

    The evaluator builds the model's handler even though evaluation sends no request, and some
    vendor clients refuse to be built without a key; they get a placeholder instead of the
    user's real keys. Read from the pinned sources with ``ast``.
    """
    names: set[str] = set()
    for path in sorted((unpacked_root / "bfcl_eval" / "model_handler").rglob("*.py")):
        names |= _env_names_read(read_small_text(path, 16 << 20))
    return tuple(sorted(name for name in names if name.endswith("_API_KEY")))


def evaluator_env(project_root: Path, key_names: Sequence[str] = ()) -> dict[str, str]:
    """A minimal environment: no credentials of the user's (evaluation needs no network),
    placeholders for the keys handlers insist on, and the project root."""
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env.update({name: KEY_PLACEHOLDER for name in key_names})
    env[PROJECT_ROOT_ENV] = str(project_root)
    env["PYTHONIOENCODING"] = "utf-8"
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


def made_by_this_tool(venv: Path) -> bool:
    return not venv.is_symlink() and ((venv / _MADE).is_file() or (venv / _MARKER).is_file())


def venv_problem(venv: Path, replacing: bool = False) -> str | None:
    """Why ``venv`` cannot be the evaluator's virtualenv: a file, or (``replacing``) a folder
    this tool did not make that would have to be replaced (it is never deleted)."""
    if venv.is_symlink() and not venv.exists():
        return f"--venv {venv} is a link to nothing"
    if venv.exists() and not venv.is_dir():
        return f"--venv {venv} is not a folder"
    if replacing and venv.is_dir() and any(venv.iterdir()) and not made_by_this_tool(venv):
        return (
            f"--venv {venv} exists and is not a virtualenv this tool made (or its evaluator "
            "does not start); it is left as it is: name a new folder, or remove it yourself"
        )
    return None


def build_venv(venv: Path, pip_args: Sequence[str] = ()) -> None:
    """Create the virtualenv and install the pinned evaluator into it (network to the package
    index once; the user's pip configuration applies). Only a folder this tool made is
    replaced: anything else there is refused, never deleted."""
    problem = venv_problem(venv, replacing=True)
    if problem is not None:
        raise SetupError(problem)
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    made = _run([sys.executable, "-m", "venv", str(venv)])
    if made.returncode != 0:
        raise SetupError(f"could not create a virtualenv at {venv}:\n{_tail(made.stderr)}")
    (venv / _MADE).write_text(pinned_version(), encoding="utf-8")
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


def ensure_venv(
    venv: Path | None = None,
    pip_args: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The evaluator's Python, building its virtualenv on first use; checked to start."""
    venv = venv or default_venv_dir()
    if (problem := venv_problem(venv)) is not None:
        raise SetupError(problem)
    python = venv_python(venv)
    marker = venv / _MARKER
    if marker.is_file() and python.is_file():
        return python
    if not python.is_file() or startup_problem(python) is not None:
        if progress:
            progress(f"building the official evaluator's virtualenv at {venv} (once; minutes)")
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
    python: Path,
    project_root: Path,
    model_name: str,
    categories: Sequence[str],
    timeout: float,
    key_names: Sequence[str],
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
        return _run(
            cmd, env=evaluator_env(project_root, key_names), cwd=project_root, timeout=timeout
        )
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
    key_names: Sequence[str] = (),
) -> ReferenceRun:
    """Evaluate the results of ``model_dir`` as the registry's ``model_name``.

    One run for all categories. When it fails before scoring anything, that is a set-up
    problem; when it fails part-way, the categories left without a score file are run one by
    one, so a crash in one category does not hide the others.
    """
    dir_name = model_name.replace("/", "_")
    prepare_project_root(project_root, model_dir, dir_name)
    score_dir = project_root / "score" / dir_name
    started = time.monotonic()
    proc = _evaluate(python, project_root, model_name, categories, timeout, key_names)
    failed: dict[str, str] = {}
    if proc.returncode != 0:
        if not _scored_categories(score_dir):
            raise SetupError(
                f"the official evaluator failed (exit {proc.returncode}) before scoring any "
                f"category:\n{_tail(proc.stdout + proc.stderr)}"
            )
        for category in categories:
            if category in _scored_categories(score_dir):
                continue
            alone = _evaluate(python, project_root, model_name, [category], timeout, key_names)
            if alone.returncode != 0 or category not in _scored_categories(score_dir):
                failed[category] = _last_line(alone.stdout + alone.stderr)
    return ReferenceRun(
        score_dir=score_dir,
        returncode=proc.returncode,
        seconds=time.monotonic() - started,
        log_tail=_tail(proc.stdout + proc.stderr),
        failed_categories=failed,
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
