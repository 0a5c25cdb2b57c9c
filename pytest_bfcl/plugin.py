"""pytest-bfcl's pytest plugin (the ``pytest11`` entry point): its options, markers and hooks.

This module stays light: pytest imports it in every run of a repository that installs the
plugin, with or without ``--bfcl-model``. The session of a BFCL run (collectors, items, the
engine and the reports) lives in :mod:`pytest_bfcl.session`, imported only when a model is
given.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_bfcl.dataset.categories import CATEGORIES
from pytest_bfcl.markers import register_markers
from pytest_bfcl.options import OPTIONS

# Also defined in pytest_bfcl.session, which this module does not import up front.
PLUGIN_NAME = "bfcl-session"
SESSION_INPUT = "bfcl_session"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_bfcl import hookspecs
    from pytest_bfcl.models import builtin

    pluginmanager.add_hookspecs(hookspecs)
    pluginmanager.register(builtin, "bfcl-builtin-models")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bfcl", "Berkeley Function-Calling Leaderboard (pytest-bfcl)")
    for opt in OPTIONS:
        if opt.kind == "flag":
            group.addoption(
                opt.flag, dest=opt.ini, action="store_true", default=None, help=opt.help
            )
            parser.addini(opt.ini, help=opt.help, type="bool", default=False)
        elif opt.kind == "append":
            group.addoption(opt.flag, dest=opt.ini, action="append", default=None, help=opt.help)
            parser.addini(opt.ini, help=opt.help, type="linelist", default=[])
        else:
            group.addoption(opt.flag, dest=opt.ini, default=None, help=opt.help)
            parser.addini(opt.ini, help=opt.help, default=None)


def _option_values(config: pytest.Config) -> dict[str, Any]:
    values = {}
    for opt in OPTIONS:
        cli = config.getoption(opt.ini, default=None)
        values[opt.name] = cli if cli not in (None, []) else config.getini(opt.ini)
    return values


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config, CATEGORIES.values())
    values = _option_values(config)
    if not values["model"]:
        return
    from pytest_bfcl import session  # the engine, only for runs that use it

    session.start(config, values)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: hand the controller's session name to each worker (the workers of one
    session share the memory snapshots made in it)."""
    if node.config.pluginmanager.has_plugin(PLUGIN_NAME):
        from pytest_bfcl.session import worker_input

        node.workerinput.update(worker_input(node.config))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """``-m bfcl`` without a model selects nothing: say why instead of a bare "deselected"."""
    if config.pluginmanager.has_plugin(PLUGIN_NAME):
        return
    markexpr = config.option.markexpr or ""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and "bfcl" in markexpr:
        terminalreporter.write_line(
            "pytest-bfcl: no --bfcl-model was given, so no BFCL entries were collected; "
            "try --bfcl-model=oracle (or set bfcl_model in the ini file)"
        )
