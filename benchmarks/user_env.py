"""The Python a model team's CI runs pytest-bfcl with, for the whole-process benchmarks.

The repository's own virtualenv holds the development tools too, and pytest loads the plugin
of every installed package in every process it starts (the controller and each xdist worker):
pytest-benchmark's, and anyio's, which imports trio when trio is installed (selenium, for the
HTML report's browser tests, brings it). On this machine that adds 0.13 s of CPU to an empty
pytest session (0.42 s against 0.29 s), paid once by ``-n 0`` and three times by ``-n 2``. A
team's CI installs the package with the extras the template's workflow names
(``examples/model-repo``: ``pytest-bfcl[ci]``) and nothing else, so the benchmarks run pytest
from such an environment: a virtualenv built once from this checkout (``pip install .[ci]``),
kept in the cache beside the pinned release and rebuilt when ``pyproject.toml`` or those
extras change. The checkout being
measured goes first on ``PYTHONPATH``, so its code runs, not the copy installed with the
environment. ``--env dev`` in the scripts measures with the running interpreter instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pytest_bfcl.dataset.fetch import default_cache_dir

REPO = Path(__file__).resolve().parents[1]
TEMPLATE_WORKFLOW = "examples/model-repo/.github/workflows/bfcl.yml"
_MARKER = "pytest-bfcl-bench-env"
ENVS = ("user", "dev")


def template_extras(repo: Path = REPO) -> str:
    """The extras the template's CI installs pytest-bfcl with (``ci``), read from its
    workflow's ``PYTEST_BFCL`` requirement."""
    text = (repo / TEMPLATE_WORKFLOW).read_text(encoding="utf-8")
    found = re.search(r'PYTEST_BFCL:\s*"pytest-bfcl\[([\w,-]+)\]', text)
    if found is None:
        raise RuntimeError(f"{TEMPLATE_WORKFLOW}: no PYTEST_BFCL requirement with extras")
    return found.group(1)


def _env_dir(repo: Path, extras: str) -> Path:
    digest = hashlib.sha256((repo / "pyproject.toml").read_bytes() + extras.encode())
    return default_cache_dir() / f"bench-user-env-{digest.hexdigest()[:16]}"


def _python_in(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def user_python(repo: Path = REPO) -> Path:
    """The Python of the team-CI environment for ``repo``'s dependencies, built on first use
    (a minute or two: the packages come from the registry)."""
    extras = template_extras(repo)
    venv = _env_dir(repo, extras)
    if (venv / _MARKER).is_file() and _python_in(venv).is_file():
        return _python_in(venv)
    print(f"building the benchmarks' user environment at {venv} (once)", file=sys.stderr)
    # The marker is written last: a build that was interrupted is started again from nothing.
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(_python_in(venv)), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"{repo}[{extras}]"], check=True)
    (venv / _MARKER).write_text(str(repo), encoding="utf-8")
    return _python_in(venv)


def python_for(env: str) -> Path:
    """The interpreter that runs pytest in the benchmarks: ``user`` (the default) or ``dev``
    (the one running the script)."""
    if env not in ENVS:
        raise ValueError(f"--env: one of {', '.join(ENVS)}, not {env!r}")
    return user_python() if env == "user" else Path(sys.executable)


def run_env(*first_on_path: str) -> dict[str, str]:
    """This process's environment with the given folders first on ``PYTHONPATH`` (the checkout
    measured, then helpers such as the phase logger), and bytecode written as installed."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled once
    paths = [p for p in first_on_path if p]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env
