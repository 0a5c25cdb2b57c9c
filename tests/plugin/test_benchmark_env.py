"""The whole-process benchmarks run pytest from what a team's CI installs
(benchmarks/user_env.py): the extras the template's workflows name, read from them."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _user_env():
    spec = importlib.util.spec_from_file_location("user_env", REPO / "benchmarks/user_env.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmarks_install_the_extras_both_template_workflows_install():
    user_env = _user_env()
    extras = user_env.template_extras()
    gitlab = (REPO / "examples/model-repo/.gitlab-ci.yml").read_text(encoding="utf-8")
    assert re.search(rf'PYTEST_BFCL:\s*"pytest-bfcl\[{re.escape(extras)}\]', gitlab)
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    optional = declared["project"]["optional-dependencies"]
    assert extras and all(extra in optional for extra in extras.split(","))


def test_a_workflow_without_the_requirement_is_said_not_guessed(tmp_path):
    user_env = _user_env()
    workflow = tmp_path / user_env.TEMPLATE_WORKFLOW
    workflow.parent.mkdir(parents=True)
    workflow.write_text('env:\n  PYTEST_BFCL: "pytest-bfcl @ git+https://example"\n')
    with pytest.raises(RuntimeError, match="no PYTEST_BFCL requirement with extras"):
        user_env.template_extras(tmp_path)


def test_the_measured_checkout_comes_first_and_bytecode_is_written(monkeypatch):
    user_env = _user_env()
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = user_env.run_env("/checkout", "", "/helpers")
    assert env["PYTHONPATH"].split(os.pathsep) == ["/checkout", "/helpers", "/elsewhere"]
    assert "PYTHONDONTWRITEBYTECODE" not in env
    with pytest.raises(ValueError, match="--env"):
        user_env.python_for("nightly")
