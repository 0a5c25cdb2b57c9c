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
from pytest_bfcl.invocation import (
    INVOCATION_KEY,
    NODE_DIR,
    Invocation,
    default_cache_dir,
    ini_value_in_place,
    read_invocation,
    selected,
)
from pytest_bfcl.markers import register_markers
from pytest_bfcl.names import PLUGIN_NAME
from pytest_bfcl.options import OPTIONS


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_bfcl import builtin_models as builtin
    from pytest_bfcl import hookspecs

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


def _option_values(config: pytest.Config) -> tuple[dict[str, Any], dict[str, str]]:
    """Each option's value (its flag's, else its ini key's), and how to name the options
    whose value came from the ini file: by their key there, so an error points at the line
    to fix."""
    values: dict[str, Any] = {}
    from_ini: dict[str, str] = {}
    for opt in OPTIONS:
        cli = config.getoption(opt.ini, default=None)
        if cli not in (None, []):
            values[opt.name] = cli
            continue
        values[opt.name] = ini_value_in_place(config, opt.name, config.getini(opt.ini))
        if values[opt.name] not in (None, "", [], False):
            from_ini[opt.name] = f"{opt.ini} (in {_ini(config)})"
    if values["cache_dir"] in (None, ""):
        values["cache_dir"] = default_cache_dir(config)
    return values, from_ini


def _ini_keys(config: pytest.Config) -> list[str]:
    """The ``bfcl_*`` keys of the ini file; an unknown one is a usage error (a misspelt
    ``bfcl_modle`` would leave the plugin silently off), with the closest known key."""
    known = {opt.ini for opt in OPTIONS}
    # pytest 9 deprecates the public ``inicfg`` (a proxy of ``_inicfg``); older ones have only it
    values = getattr(config, "_inicfg", None)
    keys = [str(k) for k in (values if values is not None else config.inicfg) if k[:5] == "bfcl_"]
    for key in keys:
        if key not in known:
            import difflib

            close = difflib.get_close_matches(key, sorted(known), n=2)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise pytest.UsageError(f"pytest-bfcl: unknown ini key {key!r} in {_ini(config)}{hint}")
    return keys


def _ini(config: pytest.Config) -> str:
    return str(config.inipath) if config.inipath else "the ini options (-o)"


def _without_a_model(config: pytest.Config, ini_keys: list[str]) -> str | None:
    """Why BFCL options without a model are a usage error: the gate they configure would never
    run, and the run would pass. ``-p no:bfcl`` leaves the plugin out on purpose."""
    given = [o for o in OPTIONS if config.getoption(o.ini, default=None) not in (None, [])]
    flags = [o.flag for o in given if o.name != "model"]
    if flags:
        return (
            f"pytest-bfcl: {', '.join(flags)} given without a model (--bfcl-model is missing "
            "or empty): no BFCL entry would run and no gate would decide; add "
            "--bfcl-model=NAME (oracle, replay:DIR, an endpoint's model)"
        )
    ini_keys = [key for key in ini_keys if key != "bfcl_model"]
    if ini_keys:
        return (
            f"pytest-bfcl: {', '.join(ini_keys)} set in {_ini(config)} without a model "
            "(--bfcl-model or bfcl_model): no BFCL entry would run and no gate would decide; "
            "give a model, or leave the plugin out of this run with -p no:bfcl"
        )
    return None


def _option_given(config: pytest.Config) -> bool:
    """Whether a ``--bfcl-*`` option is on the command line (or in ``addopts``)."""
    return any(config.getoption(o.ini, default=None) not in (None, []) for o in OPTIONS)


def _invocation(config: pytest.Config) -> Invocation:
    """An xdist worker runs the entries exactly when its controller does (which then hands
    it the session); its own arguments still name the entries it selects."""
    invocation = read_invocation(config, _option_given(config))
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return Invocation(asked="bfcl_handoff" in workerinput, selectors=invocation.selectors)
    return invocation


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config, CATEGORIES.values())
    ini_keys = _ini_keys(config)
    invocation = config.stash[INVOCATION_KEY] = _invocation(config)
    if not invocation.asked:
        return  # bfcl_* ini keys configure a run that this invocation does not ask for
    values, from_ini = _option_values(config)
    if not values["model"]:
        problem = _without_a_model(config, ini_keys)
        if problem:
            raise pytest.UsageError(problem)
        return
    from pytest_bfcl import session  # the engine, only for runs that use it

    session.start(config, values, from_ini)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: hand each worker the controller's handoff (the session name, what its
    checks found, the servers it started; :class:`pytest_bfcl.session.handoff.WorkerHandoff`)."""
    if node.config.pluginmanager.has_plugin(PLUGIN_NAME):
        from pytest_bfcl.session import worker_input

        node.workerinput.update(worker_input(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: Any, sched: Any) -> None:
    """pytest-xdist: a BFCL entry named as the one its dead worker was running says that the
    worker may have died on a later one (:func:`pytest_bfcl.session.batching.crash_note`)."""
    if crashitem.startswith(f"{NODE_DIR}/"):
        from pytest_bfcl.session.batching import crash_note

        report.longrepr = crash_note(str(report.longrepr))


def pytest_report_header(config: pytest.Config) -> str | None:
    """A model set in the ini file, and this run not asking for it: say how to ask."""
    invocation = config.stash.get(INVOCATION_KEY, None)
    if invocation is None or invocation.asked or not config.getini("bfcl_model"):
        return None
    return (
        f"pytest-bfcl: BFCL entries not run (the paths collected leave out {NODE_DIR}/); "
        f"`pytest {NODE_DIR}` or a --bfcl-* option runs them"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``pytest bfcl/<category>`` or ``bfcl/<category>::<id>``: only the entries named (the
    repository's own tests stay as its other arguments select them)."""
    invocation = config.stash.get(INVOCATION_KEY, None)
    if invocation is None or not invocation.selectors:
        return
    prefix = f"{NODE_DIR}/"
    keep = [
        i
        for i in items
        if not i.nodeid.startswith(prefix) or selected(i.nodeid, invocation.selectors)
    ]
    if len(keep) != len(items):
        kept = {id(i) for i in keep}
        config.hook.pytest_deselected(items=[i for i in items if id(i) not in kept])
        items[:] = keep


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """``-m bfcl`` without a model, or without asking, selects nothing: say why instead of a
    bare "deselected"."""
    if config.pluginmanager.has_plugin(PLUGIN_NAME):
        return
    markexpr = config.option.markexpr or ""
    if exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED or "bfcl" not in markexpr:
        return
    invocation = config.stash.get(INVOCATION_KEY, None)
    if invocation is not None and not invocation.asked:
        terminalreporter.write_line(
            f"pytest-bfcl: the paths collected leave out {NODE_DIR}/, so no BFCL entries were "
            f"collected; `pytest {NODE_DIR}` or a --bfcl-* option runs them"
        )
        return
    terminalreporter.write_line(
        "pytest-bfcl: no --bfcl-model was given, so no BFCL entries were collected; "
        "try --bfcl-model=oracle (or set bfcl_model in the ini file)"
    )
