"""The package's layering holds: every import (module-level, deferred inside functions, and
under TYPE_CHECKING) goes down the layers pictured in docs/architecture.md, and the plugin's
entry point stays light."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pytest_bfcl"
ARCHITECTURE = REPO / "docs" / "architecture.md"


def _unit(path: Path) -> str:
    """``run`` for pytest_bfcl/run/engine.py; ``settings`` for pytest_bfcl/settings.py."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else path.stem


def _imported_modules(path: Path) -> list[tuple[str, int]]:
    """Every module of the package this file imports, wherever the import stands (relative
    imports resolved), with its line."""
    package_parts = ["pytest_bfcl", *path.relative_to(PACKAGE).parts[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)]
                found.append((".".join([*base, *filter(None, [node.module])]), node.lineno))
            else:
                found.append((node.module or "", node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return [(name, line) for name, line in found if name.startswith("pytest_bfcl.")]


def _imports() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> where, for every import between two units."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit(path)
        if unit == "__init__":
            continue
        for module, line in _imported_modules(path):
            target = module.split(".")[1]
            if target != unit:
                where = f"{path.relative_to(REPO)}:{line}"
                edges.setdefault((unit, target), []).append(where)
    return edges


def _layers() -> list[list[str]]:
    """The picture's layers, bottom first: each line of the ``text`` block between the layer
    markers whose first word is a unit name (the units of one layer are joined by ``|``)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = re.search(r"<!-- layers: top to bottom -->\n```text\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no layer picture"
    layers = []
    for line in block.group(1).splitlines():
        if line and not line[0].isspace():
            names = re.match(r"([\w|\s]+?)(?:\s{2,}|$)", line)
            assert names, line
            layers.append([name.strip() for name in names.group(1).split("|")])
    return layers[::-1]


def _package_units() -> set[str]:
    return {_unit(path) for path in PACKAGE.rglob("*.py")} - {"__init__"}


def test_every_unit_of_the_package_has_a_place_in_the_picture():
    pictured = [unit for layer in _layers() for unit in layer]
    assert len(pictured) == len(set(pictured)), "a unit stands in two layers"
    assert set(pictured) == _package_units()


def test_every_import_goes_down_the_layers():
    level = {unit: depth for depth, layer in enumerate(_layers()) for unit in layer}
    upward = [
        f"{source} -> {target} ({', '.join(where)})"
        for (source, target), where in sorted(_imports().items())
        if level.get(target, -1) >= level.get(source, -1)
    ]
    assert upward == []


def test_the_check_sees_deferred_and_type_checking_imports(tmp_path):
    # The check would be hollow if it read module-level imports only.
    module = tmp_path / "pytest_bfcl" / "dataset" / "probe.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pytest_bfcl.kinds import KindSpec\n"
        "def f():\n    from ..run import engine\n"
    )
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "pytest_bfcl"
    try:
        found = {name for name, _ in _imported_modules(module)}
    finally:
        PACKAGE = saved
    assert found == {"pytest_bfcl.kinds", "pytest_bfcl.run"}


def test_the_lowest_layers_import_nothing_of_the_package():
    edges = _imports()
    for unit in ("errors", "names", "perf", "resources", "files", "redact", "scoring",
                 "pytest_private"):  # fmt: skip
        assert not [target for (source, target) in edges if source == unit], unit


def test_importing_the_plugin_imports_no_engine():
    code = (
        "import sys, pytest_bfcl.plugin, pytest_bfcl.builtin_models, pytest_bfcl.hookspecs;"
        "heavy = [m for m in ('openai', 'pydantic', 'tree_sitter', 'pytest_bfcl.run.engine',"
        " 'pytest_bfcl.session', 'httpx') if m in sys.modules]; print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_endpoint_run_starts_without_importing_the_openai_sdk():
    # Its import alone took 0.3-0.4 s of every start; the endpoint model needs only its HTTP stack.
    code = (
        "import sys; from pytest_bfcl.settings import Settings; "
        "from pytest_bfcl.run.engine import BfclRun; "
        "BfclRun.create(Settings(model='m', categories=['simple_python'], "
        "base_urls=['http://127.0.0.1:9/v1'])); print('openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# What pytest keeps private: its internal package, and the names of its internals that
# pytest-bfcl reads or overrides.
PYTEST_PRIVATE = re.compile(
    r"\b_pytest\b|\._fixturemanager\b|\._to_json\b|\._from_json\b|\b_repr_failure_py\b"
    r"|\b_ispytest\b|\._fillfixtures\b|\b_fixtureinfo\b|\b_initrequest\b|\._request\b"
)


def test_pytest_private_parts_are_used_behind_one_door_only():
    door = PACKAGE / "pytest_private.py"
    assert PYTEST_PRIVATE.search(door.read_text(encoding="utf-8"))  # the pattern still bites
    users = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != door
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PYTEST_PRIVATE.search(line)
    ]
    assert users == []


# Modules over the size limit, each waiting to be split; the list may only shrink (now empty).
OVERSIZED: set[str] = set()
LINE_LIMIT = 450


def test_no_module_outside_the_simulated_applications_outgrows_the_limit():
    sizes = {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] != "backends"
    }
    over = {name for name, lines in sizes.items() if lines > LINE_LIMIT}
    assert over <= OVERSIZED, f"over {LINE_LIMIT} lines: {sorted(over - OVERSIZED)}"
    assert over == OVERSIZED, f"within the limit now, drop from OVERSIZED: {OVERSIZED - over}"


def test_the_running_pytest_is_one_the_private_parts_are_known_to_work_with():
    # A new pytest release is a red build here until the door's uses are checked against it.
    import pytest

    from pytest_bfcl.pytest_private import KNOWN_PYTEST

    version = pytest.__version__
    assert any(version == known or version.startswith(f"{known}.") for known in KNOWN_PYTEST), (
        f"pytest {version} is not among {KNOWN_PYTEST}: check pytest_bfcl/pytest_private.py"
    )


def test_the_tests_mirror_every_package():
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    missing = sorted(name for name in packages if not (REPO / "tests" / name).is_dir())
    assert missing == []


def test_the_engine_stays_a_coordinator():
    # Selection, metadata, model construction and the known-errors policy live in their own
    # modules; the engine wires them (at most 300 lines).
    lines = (PACKAGE / "run" / "engine.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300


def test_the_gate_is_read_through_its_public_surface():
    # Reports, the session and the tools import ``pytest_bfcl.gate``, never its modules.
    reaching_in = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "gate"
        for module, line in _imported_modules(path)
        if module.startswith("pytest_bfcl.gate.")
    ]
    assert reaching_in == []
