"""The model-repo template where it will live: copied into a git repository of its own outside
this checkout, with a unit test of its own, the plugin installed as its CI files install it
(from a wheel built from this checkout, through ``$PYTEST_BFCL``), and every command of both CI
files run as written there, with the oracle: a pull request's gate, the baseline recorded on
main, and a planted regression that must fail the gate and say why."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")  # a development dependency: reads the CI files

pytestmark = pytest.mark.e2e  # runs the plugin in pytest processes of its own

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "examples" / "model-repo"
UNIT_TEST = "def test_arithmetic():\n    assert 1 + 1 == 2\n"
PULL_REQUEST = "github.event_name == 'pull_request'"
MAIN = "github.event_name != 'pull_request'"


def github_steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load((TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text())
    return workflow["jobs"]["bfcl"]["steps"]


def gitlab() -> dict[str, Any]:
    return yaml.safe_load((TEMPLATE / ".gitlab-ci.yml").read_text())


def runs(condition: str | None) -> list[str]:
    """The shell lines of the GitHub job's steps that run under a condition, in order."""
    return [s["run"] for s in github_steps() if "run" in s and s.get("if") == condition]


def project_version() -> str:
    found = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert found is not None
    return found.group(1)


def test_the_ci_files_install_the_pinned_release_never_a_path_into_this_repository():
    install = runs(None)
    assert install == ['pip install "$PYTEST_BFCL" -e .']
    assert gitlab()[".bfcl"]["before_script"] == install
    pin = f"pytest-bfcl @ git+https://github.com/ORG/pytest-bfcl@v{project_version()}"
    workflow = yaml.safe_load((TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text())
    assert workflow["env"]["PYTEST_BFCL"] == pin
    assert gitlab()[".bfcl"]["variables"]["PYTEST_BFCL"] == pin
    wheel = f"pytest_bfcl-{project_version()}-py3-none-any.whl"
    for ci in (TEMPLATE / ".github" / "workflows" / "bfcl.yml", TEMPLATE / ".gitlab-ci.yml"):
        text = ci.read_text()
        assert "../" not in text and wheel in text  # the air-gapped form names this release
    import pytest_bfcl

    assert pytest_bfcl.__version__ == project_version()


def test_both_ci_files_run_the_same_commands():
    jobs = gitlab()
    pull_request = [line for line in runs(PULL_REQUEST)]
    gitlab_pr = jobs["bfcl-merge-request"]["script"]
    assert pull_request[-1] == gitlab_pr[-1]  # the gate itself; fetching main differs
    assert runs(MAIN) == jobs["bfcl-full"]["script"]
    assert not any(re.search(r"(^|\s)-n\b", line) for line in pull_request)  # one process


def test_ci_caches_the_dataset_and_the_responses_where_the_plugin_keeps_them():
    from pytest_bfcl.settings import Settings

    cached = [s["with"]["path"] for s in github_steps() if s.get("uses") == "actions/cache@v4"]
    assert cached == [".bfcl-data", str(Settings(model="oracle").cache_dir)]
    workflow = yaml.safe_load((TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text())
    assert workflow["env"]["BFCL_CACHE_DIR"].endswith("/.bfcl-data")
    jobs = gitlab()[".bfcl"]
    assert jobs["variables"]["BFCL_CACHE_DIR"] == "$CI_PROJECT_DIR/.bfcl-data"
    assert [c["paths"] for c in jobs["cache"][:2]] == [[".bfcl-data/"], [".bfcl-cache/"]]
    ignored = (TEMPLATE / ".gitignore").read_text().split()
    assert {"reports/", ".bfcl-cache/", ".bfcl-data/", ".pytest_cache/"} <= set(ignored)


def test_the_committed_baseline_matches_the_pinned_release():
    baseline = json.loads((TEMPLATE / "baseline" / "bfcl-baseline.json").read_text())
    assert baseline["metadata"]["dataset"]["version"] == "2026.3.23"
    assert baseline["metadata"]["dataset"]["data_dir"] is None
    assert len(baseline["verdicts"]) == 3641 + 2  # single_turn and the two acme_tools entries


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _shell(cwd: Path, line: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", line],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def adopted(tmp_path_factory, data_source) -> dict[str, Any]:
    """A team's repository made from the template, cloned as CI checks it out, with the plugin
    installed by the CI files' own install line from a wheel of this checkout."""
    pytest.importorskip("build")  # a development dependency: makes the wheel installed
    root = tmp_path_factory.mktemp("adoption")
    assert REPO not in root.parents
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(root / "dist"), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (root / "dist").glob("pytest_bfcl-*.whl")

    origin = root / "team-model"
    shutil.copytree(TEMPLATE, origin)
    (origin / "tests").mkdir()
    (origin / "tests" / "test_arithmetic.py").write_text(UNIT_TEST)
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", "-A")
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "template")
    checkout = root / "checkout"
    _git(root, "clone", "-q", str(origin), str(checkout))

    # A virtualenv of its own, which sees this interpreter's packages (the plugin's
    # dependencies, offline) but gets pytest-bfcl only from the wheel.
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    (site,) = (venv / "lib").glob("python*/site-packages")
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # pytest's own command, as installing it into the virtualenv would make it
    command = venv / "bin" / "pytest"
    command.write_text(f'#!/bin/sh\nexec "{venv / "bin" / "python"}" -m pytest "$@"\n')
    command.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "GITHUB"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        PYTEST_BFCL=str(wheel),
        BFCL_CACHE_DIR=str(data_source.unpacked_root.parent),  # the release, fetched once
        MODEL_REVISION="abc123",
        CI_DEFAULT_BRANCH="main",
        PIP_NO_BUILD_ISOLATION="1",
    )
    for line in runs(None):
        installed = _shell(checkout, line, env)
        assert installed.returncode == 0, installed.stderr[-3000:]
    return {"root": root, "checkout": checkout, "env": env, "wheel": wheel}


def test_the_wheel_carries_the_data_files_and_the_version(adopted):
    names = zipfile.ZipFile(adopted["wheel"]).namelist()
    for data in ("bfcl_eval.lock.json", "oracle_known_failures.json"):
        assert f"pytest_bfcl/data/{data}" in names
    assert adopted["wheel"].name == f"pytest_bfcl-{project_version()}-py3-none-any.whl"
    shown = _shell(adopted["checkout"], "pip show pytest-bfcl", adopted["env"]).stdout
    assert f"Version: {project_version()}" in shown
    where = _shell(
        adopted["checkout"], "python -c 'import pytest_bfcl; print(pytest_bfcl.__file__)'",
        adopted["env"],
    ).stdout  # fmt: skip
    assert str(REPO) not in where and "site-packages" in where


def test_the_teams_unit_test_runs_alone(adopted):
    checkout, env = adopted["checkout"], adopted["env"]
    for line in ("pytest", "pytest tests/", 'pytest -m "not bfcl"', "pytest -p no:bfcl"):
        result = _shell(checkout, line, env)
        assert result.returncode == 0, (line, result.stdout[-2000:], result.stderr[-2000:])
        assert "1 passed" in result.stdout and "BFCL V4 scores" not in result.stdout, line


def test_ci_commands_gate_a_pull_request_record_main_and_fail_a_regression(adopted):
    checkout, env = adopted["checkout"], adopted["env"]
    committed = (checkout / "baseline" / "bfcl-baseline.json").read_bytes()

    # main (and nightly): the full selection, with a new baseline kept as an artifact
    for line in runs(MAIN):
        result = _shell(checkout, line, env)
        assert result.returncode == 0, result.stdout[-3000:]
        assert "BFCL gate: passed" in result.stdout
    assert (checkout / "reports" / "bfcl-baseline.json").is_file()

    # a pull request, on both CI systems: main's baseline, the gate on a sample, one process
    _git(checkout, "checkout", "-q", "-b", "feature")
    for lines in (runs(PULL_REQUEST), gitlab()["bfcl-merge-request"]["script"]):
        result = _shell(checkout, " && ".join(lines), env)
        assert result.returncode == 0, result.stdout[-3000:]
        out = result.stdout
        assert "BFCL gate: passed" in out and "model checkpoint: abc123" in out
        assert len((out + result.stderr).splitlines()) <= 150
        assert "Warning" not in out
        assert "test_arithmetic" not in out  # the job runs the benchmark, not the unit tests
    junit = (checkout / "reports" / "junit.xml").read_text()
    assert 'name="model_revision" value="abc123"' in junit

    # a planted regression: the model now fails a fifth of the entries
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'bfcl_model = "oracle"', 'bfcl_model = "oracle:fail=0.2,seed=3"'
        )
    )
    result = _shell(checkout, " && ".join(runs(PULL_REQUEST)), env)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "BFCL gate: FAILED" in result.stdout
    assert re.search(r"^regressed in \w+: ", result.stdout, flags=re.M)
    # bounded but for pytest's own line per failed test in its short summary
    failed = int(re.findall(r"(\d+) failed", result.stdout)[-1])
    assert len(result.stdout.splitlines()) <= 150 + failed

    # nothing the commands did touches what the repository commits
    assert (checkout / "baseline" / "bfcl-baseline.json").read_bytes() == committed
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=checkout, capture_output=True, text=True
    ).stdout
    assert status.split() == ["M", "pyproject.toml"]  # the planted change alone; reports ignored

    # the first baseline of a model of the team's own, by the command docs/model-repo.md gives:
    # the committed baseline (the oracle's) is refused in one line naming it; the command
    # records the model's failures and exits 0
    pyproject.write_text(
        pyproject.read_text().replace(
            'bfcl_model = "oracle:fail=0.2,seed=3"', 'bfcl_model = "replay:results/oracle"'
        )
    )
    # stored answers of a model that fails some entries (a run of its own exits 1: no gate)
    _shell(checkout, "pytest bfcl -q --bfcl-baseline= --bfcl-results-dir=results "
           "--bfcl-model=oracle:fail=0.2,seed=3", env)  # fmt: skip
    assert (checkout / "results" / "oracle").is_dir()
    command = first_baseline_command()
    refused = _shell(checkout, "pytest bfcl", env)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert command in refused.stderr and "model differs" in refused.stderr
    first = _shell(checkout, command, env)
    assert first.returncode == 0, first.stdout[-3000:]
    assert "xfailed" in first.stdout and " failed" not in first.stdout.splitlines()[-1]
    verdicts = json.loads((checkout / "baseline" / "bfcl-baseline.json").read_text())["verdicts"]
    assert not all(verdicts.values())  # the model's failures, recorded
    assert _shell(checkout, "pytest bfcl", env).returncode == 0  # it fits from now on


def first_baseline_command() -> str:
    """The command under docs/model-repo.md's heading that says "first baseline"."""
    text = (REPO / "docs" / "model-repo.md").read_text()
    heading = re.search(r"^##+ .*first baseline.*$", text, re.M | re.I)
    assert heading is not None
    block = re.search(r"```bash\n(.*?)```", text[heading.end() :], re.S)
    assert block is not None
    return block.group(1).strip()
