"""The package's layering holds: no import cycles between its packages (module-level imports;
imports inside functions and TYPE_CHECKING blocks are the deliberate lazy ones), and the
plugin's entry point stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_bfcl"


def _unit(path: Path) -> str:
    """``run`` for pytest_bfcl/run/engine.py; ``settings`` for pytest_bfcl/settings.py."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else path.stem


def _module_level_imports(path: Path) -> set[str]:
    units = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_bfcl."):
            units.add(node.module.split(".")[1])  # type: ignore[union-attr]
    return units


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        unit = _unit(path)
        graph.setdefault(unit, set()).update(_module_level_imports(path) - {unit})
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for nxt in graph.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def test_no_import_cycles_between_packages():
    graph = _graph()
    cycles = sorted((a, b) for a, targets in graph.items() for b in targets
                    if a in _reachable(graph, b))  # fmt: skip
    assert cycles == []


def test_lower_layers_do_not_import_upper_ones():
    graph = _graph()
    assert not graph["errors"]
    # the options (read in every pytest run) stay plain: their rules and the category names
    assert graph["options"] <= {"option_rules"}
    assert graph["option_rules"] <= {"dataset", "scoring"}
    for low in ("dataset", "decode", "check", "scoring", "settings"):
        assert not {"run", "session", "plugin", "report", "models"} & graph[low], low
    assert "session" not in _reachable(graph, "run")


def test_importing_the_plugin_imports_no_engine():
    code = (
        "import sys, pytest_bfcl.plugin, pytest_bfcl.models.builtin, pytest_bfcl.hookspecs;"
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
