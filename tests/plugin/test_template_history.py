"""The template's ci/keep-baseline.sh, as main's CI job runs it: each baseline recorded on main
is kept on the bfcl-history branch of the team's repository (never on main), and the scores
across merges are drawn from what the branch holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "model-repo" / "ci" / "keep-baseline.sh"

pytestmark = pytest.mark.e2e


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture
def team(tmp_path):
    """A team's repository (a bare origin and main's checkout) and a ``python`` that runs
    this checkout's plugin."""
    origin, checkout = tmp_path / "origin.git", tmp_path / "checkout"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    _git(tmp_path, "clone", "-q", str(origin), str(checkout))
    (checkout / "README.md").write_text("team model\n")
    _git(checkout, "add", "-A")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    _git(checkout, "push", "-q", "origin", "main")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTEST"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHONPATH=str(REPO))
    return origin, checkout, env


def _keep(checkout: Path, env: dict[str, str], baseline: Path, revision: str):
    return subprocess.run(
        ["bash", str(SCRIPT), str(baseline)],
        cwd=checkout, env={**env, "MODEL_REVISION": revision},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_main_baselines_are_kept_on_their_branch_and_drawn(team, tmp_path, data_source):
    origin, checkout, env = team
    kept = []
    for number, spoil in enumerate(("", ",fail=0.1", ""), 1):
        baseline = tmp_path / f"b{number}.json"
        recorded = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
             f"--bfcl-model=oracle:seed={number}{spoil}", f"--bfcl-data={data_source.data_dir}",
             "--bfcl-category=simple_python", f"--bfcl-save-baseline={baseline}"],
            cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert baseline.is_file(), recorded.stdout[-2000:]
        done = _keep(checkout, env, baseline, f"{number:040x}")
        assert done.returncode == 0, done.stderr[-2000:]
        kept.append(baseline.read_bytes())
    names = _git(origin, "ls-tree", "--name-only", "bfcl-history", "runs/").split()
    assert len(names) == 3 and names == sorted(names)
    assert [n.rsplit("-", 1)[1] for n in names] == [f"{i:040x}"[:12] + ".json" for i in (1, 2, 3)]
    assert [_git(origin, "show", f"bfcl-history:{n}").encode() for n in names] == kept
    # main holds none of it, and the checkout is as it was
    assert "runs" not in _git(origin, "ls-tree", "--name-only", "main").split()
    assert _git(checkout, "status", "--porcelain").split() == ["??", "reports/"]
    # the page of the three runs, and the drop of the second merge in the log
    assert (checkout / "reports" / "bfcl-history.html").read_text().count("<tr><td>#") == 3
    assert "#1 -> #2 simple_python" in done.stdout and "significant drop" in done.stdout


def test_a_run_that_wrote_no_baseline_keeps_nothing(team, tmp_path):
    origin, checkout, env = team
    done = _keep(checkout, env, tmp_path / "missing.json", "f" * 40)
    assert done.returncode == 0 and "nothing kept" in done.stderr
    assert "bfcl-history" not in _git(origin, "branch", "--list")


def test_both_ci_files_keep_the_baseline_main_records():
    yaml = pytest.importorskip("yaml")
    template = REPO / "examples" / "model-repo"
    github = yaml.safe_load((template / ".github" / "workflows" / "bfcl.yml").read_text())
    gitlab = yaml.safe_load((template / ".gitlab-ci.yml").read_text())
    full = [
        s["run"] for s in github["jobs"]["bfcl"]["steps"] if "full selection" in s.get("name", "")
    ]
    saved = full[0].split("--bfcl-save-baseline=", 1)[1].split()[0]
    keep = f"ci/keep-baseline.sh {saved}"
    history = github["jobs"]["history"]
    assert history["needs"] == "bfcl" and history["permissions"] == {"contents": "write"}
    assert keep in [s.get("run") for s in history["steps"]]
    assert "push" in history["if"] and "cancelled" in history["if"]  # a failed gate is kept too
    assert f"--bfcl-save-baseline={saved}" in gitlab["bfcl-full"]["script"][0]
    assert gitlab["bfcl-history"]["script"] == [keep]
    assert gitlab["bfcl-history"]["needs"] == ["bfcl-full"]
