"""The model-repo example works as a team would copy it: it installs against the local plugin
(never the bare, unpublished name), and the command its CI jobs run on a pull request passes
the gate with the oracle and writes every file the jobs publish."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

# The CI files are read with PyYAML, a development dependency: without it (a plain install
# running README's main job from the checkout) the module is skipped, not a collection error.
yaml = pytest.importorskip("yaml")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "model-repo"
INSTALL = "pip install -e ../.. -e ."


def _github() -> dict[str, Any]:
    return yaml.safe_load((EXAMPLE / ".github" / "workflows" / "bfcl.yml").read_text())


def _gitlab() -> dict[str, Any]:
    return yaml.safe_load((EXAMPLE / ".gitlab-ci.yml").read_text())


def _github_steps() -> list[dict[str, Any]]:
    return _github()["jobs"]["bfcl"]["steps"]


def _pytest_line(lines: list[str]) -> str:
    (line,) = [line for line in lines if line.startswith("pytest")]
    return line


def pull_request_command() -> str:
    """The pytest command both CI files run on a pull (merge) request, checked to be one."""
    github = _pytest_line(
        [s["run"] for s in _github_steps() if s.get("if") == "github.event_name == 'pull_request'"]
    )
    gitlab = _pytest_line(_gitlab()["bfcl-merge-request"]["script"])
    assert github == gitlab
    return github


@pytest.fixture
def example(pytester, data_source):  # data_source: the pinned release is in the cache
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True)
    return pytester


def test_the_example_installs_against_the_local_plugin():
    text = (EXAMPLE / "pyproject.toml").read_text()
    (dependencies,) = re.findall(r"^dependencies = \[(.*)\]$", text, flags=re.M)
    assert "pytest-xdist" in dependencies
    # a bare name would install whatever someone published under it
    assert not re.search(r"pytest[-_]bfcl", dependencies)
    repo = Path(__file__).resolve().parents[2]
    assert (EXAMPLE / "../..").resolve() == repo and (repo / "pytest_bfcl").is_dir()
    github_install = [s["run"] for s in _github_steps() if s.get("name") == "Install"]
    assert github_install == [INSTALL]
    assert _gitlab()[".bfcl"]["before_script"] == [INSTALL]
    assert f"{INSTALL}  " in (EXAMPLE / "README.md").read_text()


def test_ci_caches_the_dataset_and_the_responses_where_the_plugin_keeps_them():
    from pytest_bfcl.settings import Settings

    cached = [s["with"]["path"] for s in _github_steps() if s.get("uses") == "actions/cache@v4"]
    assert cached == [".bfcl-data", str(Settings(model="oracle").cache_dir)]
    assert _github()["env"]["BFCL_CACHE_DIR"].endswith("/.bfcl-data")
    gitlab = _gitlab()[".bfcl"]
    assert gitlab["variables"]["BFCL_CACHE_DIR"] == "$CI_PROJECT_DIR/.bfcl-data"
    assert [c["paths"] for c in gitlab["cache"][:2]] == [[".bfcl-data/"], [".bfcl-cache/"]]


def test_pull_requests_run_in_one_process():
    command = shlex.split(pull_request_command())
    assert "-n" not in command and not any(a.startswith(("-n", "--numprocesses")) for a in command)


def test_the_pull_request_command_passes_the_gate_and_writes_what_ci_publishes(example):
    args = shlex.split(pull_request_command())[1:]
    result = example.runpytest(*args)
    assert result.ret == 0, result.stdout.str()[-3000:]
    out = result.stdout.str()
    assert "BFCL gate: passed" in out
    assert "model checkpoint: local working tree" in out
    published = [
        p
        for s in _github_steps()
        if s.get("uses") == "actions/upload-artifact@v4"
        for p in s["with"]["path"].split()
    ]
    gitlab = _gitlab()[".bfcl"]["artifacts"]
    assert gitlab["reports"]["junit"] == "reports/junit.xml"
    assert sorted(gitlab["paths"]) == sorted(
        p for p in published if p != "reports/bfcl-baseline.json"
    )
    for path in gitlab["paths"]:
        assert (example.path / path).exists(), path
    report = json.loads((example.path / "reports" / "bfcl-report.json").read_text())
    assert report["metadata"]["sample"] == 0.1 and report["complete"]
    assert report["gate"]["comparisons"] and not any(
        c["failed"] for c in report["gate"]["comparisons"]
    )
    assert "acme_tools" in report["categories"]  # the conftest's own category ran
    junit = ET.parse(example.path / "reports" / "junit.xml").getroot()
    cases = [
        {p.get("name"): p.get("value") for p in c.iter("property")} for c in junit.iter("testcase")
    ]
    entries = [props for props in cases if "bfcl_id" in props]
    assert len(entries) == sum(c["expected"] for c in report["categories"].values())
    # the conftest's autouse fixture, on every entry
    assert all(e.get("model_revision") == "local working tree" for e in entries)
    assert "<html" in (example.path / "reports" / "bfcl-report.html").read_text()[:2000].lower()


def test_committed_baseline_matches_the_pinned_release(example):
    baseline = json.loads((example.path / "baseline" / "bfcl-baseline.json").read_text())
    assert baseline["metadata"]["dataset"]["version"] == "2026.3.23"
    assert baseline["metadata"]["dataset"]["data_dir"] is None
    assert len(baseline["verdicts"]) == 3641 + 2  # single_turn and the two acme_tools entries
