"""The dependencies pyproject.toml declares are what the package imports: every third-party
module the code imports comes from a declared distribution (the core's or an extra's), every
core dependency is imported, and the bounds say what the code relies on."""

from __future__ import annotations

import ast
import functools
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pytest_bfcl"
# The import name of a distribution that is not installed here (packages_distributions only
# knows installed ones).
KNOWN = {
    "_pytest": "pytest",
    "xdist": "pytest-xdist",
    "faiss": "faiss-cpu",
    "bs4": "beautifulsoup4",
}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _imports() -> dict[str, set[str]]:
    """Third-party top-level modules the package imports, with the files importing them."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top != "pytest_bfcl" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(path.relative_to(REPO).as_posix())
    return found


@functools.cache
def _installed() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    """The distributions that may provide ``module``: the installed ones, or, where none is
    installed (an extra left out, as in CI's run at the oldest pytest), the known name or the
    module's own name as a distribution's (sentence_transformers: sentence-transformers)."""
    installed = {_normal(d) for d in _installed().get(module, [])}
    if module in KNOWN:
        return installed | {_normal(KNOWN[module])}
    return installed or {_normal(module)}


def test_every_imported_module_comes_from_a_declared_distribution():
    project = _project()
    declared = {_normal(Requirement(r).name) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        declared |= {_normal(Requirement(r).name) for r in extra}
    undeclared = {
        module: sorted(files)
        for module, files in _imports().items()
        if not _distributions(module) & declared
    }
    assert undeclared == {}


def test_every_core_dependency_is_imported_and_requests_is_the_web_extras():
    project = _project()
    imported = set().union(*(_distributions(m) for m in _imports()))
    core = [Requirement(r) for r in project["dependencies"]]
    assert [r.name for r in core if _normal(r.name) not in imported] == []
    assert "openai" not in {r.name for r in core}  # the plugin sends plain JSON: no SDK
    web = {Requirement(r).name for r in project["optional-dependencies"]["web"]}
    assert "requests" in web and "requests" not in {r.name for r in core}
    # requests is imported by the web tools alone
    assert _imports()["requests"] == {"pytest_bfcl/web/fetch.py"}


def test_bounds_say_what_the_code_relies_on():
    core = {Requirement(r).name: Requirement(r).specifier for r in _project()["dependencies"]}
    # the grammars are pinned; tree-sitter stays below the release that deprecates them
    assert str(core["tree-sitter-java"]).startswith("==")
    assert "0.25.2" in core["tree-sitter"] and "0.26" not in core["tree-sitter"]
    assert "0.22.0" in core["tree-sitter"] and "0.21.3" not in core["tree-sitter"]
    # the transport reaches into the HTTP client's internals: bounded to one major version
    for name in ("httpx2", "httpcore2"):
        assert any(s.operator == "<" for s in core[name]), name
    assert metadata.version("httpx2") in core["httpx2"]  # this environment is in range


def test_the_lowest_versions_ci_installs_are_pyprojects_lower_bounds():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "lowest", REPO / "tools" / "lowest_constraints.py"
    )
    assert spec is not None and spec.loader is not None
    lowest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lowest)
    assert lowest.lowest_pins(["b>=1.2,<2", "a==0.21.0", "c", "pytest-bfcl[web]", "d~=3.1"]) == [
        "a==0.21.0", "b==1.2", "d==3.1",
    ]  # fmt: skip
    pins = lowest.lowest_pins(_project()["dependencies"])
    assert "tree-sitter==0.22" in pins and "httpx2==2.0" in pins
    assert not any(p.startswith(("openai", "requests")) for p in pins)
