"""README.md stays true to the code: every option is documented, every option it names exists,
and its examples do what it says they do."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_bfcl.options import OPTIONS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
FLAGS = {opt.flag for opt in OPTIONS}


def test_every_option_is_in_the_options_table():
    table = README[README.index("### Options") : README.index("## What a run guarantees")]
    missing = sorted(flag for flag in FLAGS if f"`{flag}" not in table)
    assert not missing, f"options missing from README's table: {missing}"


def test_every_option_the_readme_names_exists():
    named = set(re.findall(r"--bfcl-[a-z0-9-]*[a-z0-9]", README))
    assert named - FLAGS == set()


def test_the_two_commands_are_the_ones_ci_runs():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    tests_command = re.search(r"\.venv/bin/pip install -q -e '\.\[dev\]' && (.+)\n", README)
    assert tests_command is not None and tests_command.group(1) == ".venv/bin/pytest"
    assert ci.rstrip().endswith(".venv/bin/pytest")
    assert "--bfcl-model=oracle --bfcl-category=single_turn -m bfcl" in README


def _collected(pytester, *args: str) -> int:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)
    return sum(1 for line in result.stdout.lines if line.startswith("bfcl/"))


def test_selection_examples_select_what_the_readme_says(pytester, data_source):
    data = f"--bfcl-data={data_source.data_dir}"
    whole = _collected(pytester, "--bfcl-model=oracle", "--bfcl-category=multiple", data)
    deselected = _collected(
        pytester, "--bfcl-model=oracle", "--bfcl-category=multiple", data,
        "--deselect", "bfcl/multiple::multiple_199",
    )  # fmt: skip
    assert (whole, deselected) == (200, 199)  # exactly the one entry
    prefix = _collected(
        pytester, "--bfcl-model=oracle", "--bfcl-category=multiple", data,
        "--deselect", "bfcl/multiple::multiple_3",
    )  # fmt: skip
    assert prefix == 200 - 11  # the prefix rule the README warns about
    live = _collected(
        pytester, "--bfcl-model=oracle", data, "-m", "bfcl_live and not bfcl_live_irrelevance"
    )
    assert live == 258 + 1053 + 16 + 24 + 16  # the live categories but live_irrelevance


def test_the_conformance_tool_documented_in_the_readme_starts():
    result = subprocess.run(
        [sys.executable, "-m", "pytest_bfcl.conformance", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert "--leaderboard-model" in result.stdout and "results" in result.stdout.lower()


@pytest.mark.parametrize("image", re.findall(r"\]\((docs/images/[^)]+\.png)\)", README))
def test_the_screenshots_exist(image):
    assert (REPO / image).is_file()
