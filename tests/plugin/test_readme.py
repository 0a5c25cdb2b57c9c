"""README.md and docs/ stay true to the code: every option is documented, every option they name
exists, README stays an entry page, the documentation site builds, and the examples do what they
say they do."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_bfcl.options import OPTIONS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = {p.name: p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))}
FLAGS = {opt.flag for opt in OPTIONS}


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| `--bfcl-")]


def test_every_option_is_in_the_options_page():
    table = "\n".join(_table_rows(DOCS["options.md"]))
    missing = sorted(flag for flag in FLAGS if f"`{flag}" not in table)
    assert not missing, f"options missing from docs/options.md: {missing}"


def test_readme_is_an_entry_page_with_ten_options_of_the_reference():
    assert len(README.splitlines()) <= 250
    rows = _table_rows(README)
    assert len(rows) == 10
    reference = "\n".join(_table_rows(DOCS["options.md"]))
    for row in rows:
        for flag in re.findall(r"`(--bfcl-[a-z0-9-]+)", row.split(" | ")[0]):
            assert f"| `{flag}` |" in reference, flag


def test_every_option_the_readme_and_docs_name_exists():
    for name, text in [("README.md", README), *DOCS.items()]:
        named = set(re.findall(r"--bfcl-[a-z0-9-]*[a-z0-9]", text))
        assert named - FLAGS == set(), name


def in_nav(nav: list) -> set[str]:
    """The pages of mkdocs.yml's nav, its sections flattened."""
    pages: set[str] = set()
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages |= in_nav(value) if isinstance(value, list) else {value}
    return pages


def test_every_docs_page_is_in_the_site_and_the_site_builds(tmp_path):
    yaml = pytest.importorskip("yaml")
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!ENV", lambda loader, node: None)  # MkDocs' environment values
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=loader)
    assert in_nav(config["nav"]) == set(DOCS)
    pytest.importorskip("mkdocs")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "site" / "model-repo" / "index.html").is_file()


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


@pytest.mark.parametrize("image", re.findall(r"\]\((images/[^)]+\.png)\)", DOCS["reports.md"]))
def test_the_screenshots_exist(image):
    assert (REPO / "docs" / image).is_file()


def test_the_terminal_sections_are_in_the_order_the_reports_page_gives(pytester, data_source):
    documented = [
        title.split(":")[0].removesuffix(" ...")
        for title in re.findall(r"^\d\. `(BFCL [^`]+)`", DOCS["reports.md"], flags=re.M)
    ]
    assert documented[:2] == ["BFCL V4 scores", "BFCL failures"]
    args = ["--bfcl-model=oracle:fail=0.2,seed=1", "--bfcl-category=live_parallel",
            f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider"]  # fmt: skip
    baseline = pytester.path / "b.json"
    pytester.runpytest(*args, "--bfcl-model=oracle", f"--bfcl-save-baseline={baseline}")
    result = pytester.runpytest(*args, "--bfcl-sample=8", f"--bfcl-baseline={baseline}",
                                f"--bfcl-report={pytester.path / 'r.json'}")  # fmt: skip
    titles = [
        re.sub(r"^=+ (.*?) =+$", r"\1", line)
        for line in result.stdout.lines
        if re.match(r"^=+ BFCL ", line)
    ]
    printed = [next(d for d in documented if t.startswith(d)) for t in titles]
    assert len(printed) == 5  # every documented section but "files not written"
    assert printed == [d for d in documented if d in printed]  # in the documented order
