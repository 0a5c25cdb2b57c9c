"""Every use of pytest's private parts, behind one door.

pytest has no public way to give an item that is not a test function its fixtures, to send a
test report across processes packed, or to write junit testcases itself; pytest-bfcl does all
three. What it reads or overrides of pytest's internals is here and nowhere else (a test keeps
it so), with the pytest versions it is known to work with: CI runs the plugin's tests on the
oldest and the newest. Where an internal is missing or of another shape, the callers fall back
to pytest's own behaviour (``junitxml_writer`` returns None) or fail loudly at start-up, never
silently change what a run reports.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from _pytest.outcomes import XFailed

# ``pytest.xfail``'s exception, as a class to derive from (pytest names it only as an
# attribute of the function: ``pytest.xfail.Exception``).
ExpectedFailure = XFailed

# The pytest releases this module's uses are tested with (CI: the oldest and the newest).
KNOWN_PYTEST = ("7.4", "8", "9")

# What the text testcases read of pytest's junit writer and its module.
_LOGXML_FIELDS = (
    "node_reporters",
    "node_reporters_ordered",
    "stats",
    "family",
    "logging",
    "report_duration",
    "prefix",
    "logfile",
)
_JUNITXML_HELPERS = ("xml_key", "bin_xml_escape", "mangle_test_address", "families")


def _message_as_it_is(message: str) -> str:
    return message


class JunitHelpers:
    """pytest's junit module's helpers, as this pytest version writes a testcase."""

    def __init__(self, junitxml: ModuleType) -> None:
        self.escape: Callable[[object], str] = junitxml.bin_xml_escape
        self.mangle: Callable[[str], list[str]] = junitxml.mangle_test_address
        self.families: dict[str, Any] = junitxml.families
        # pytest 9 shortens a failure's message attribute; earlier releases write it whole.
        self.shorten: Callable[[str], str] = getattr(junitxml, "shorten_message", _message_as_it_is)


def pytest_version() -> str:
    return pytest.__version__


def junitxml_writer(config: pytest.Config) -> tuple[Any, JunitHelpers] | None:
    """pytest's junit writer of this session (``--junitxml``) and its module, when both have
    the shape the text testcases know; None otherwise (no junit file, another pytest)."""
    try:
        from _pytest import junitxml
    except ImportError:
        return None
    if not all(hasattr(junitxml, name) for name in _JUNITXML_HELPERS):
        return None
    xml = config.stash.get(junitxml.xml_key, None)
    if xml is None or not all(hasattr(xml, name) for name in _LOGXML_FIELDS):
        return None
    return xml, JunitHelpers(junitxml)


def junit_logfile(config: pytest.Config) -> str | None:
    """The path pytest's junit writer will write (``--junitxml``), whatever the writer's
    shape; None without one."""
    try:
        from _pytest import junitxml
    except ImportError:
        return None
    xml = config.stash.get(junitxml.xml_key, None)
    logfile = getattr(xml, "logfile", None)
    return logfile if isinstance(logfile, str) else None


def switch_junit_writer_off(config: pytest.Config) -> None:
    """Unregister pytest's junit writer, so it writes no file at the session's end."""
    from _pytest import junitxml

    xml = config.stash.get(junitxml.xml_key, None)
    if xml is not None:
        config.pluginmanager.unregister(xml)
        del config.stash[junitxml.xml_key]


def raised_by_junit_writer(exc: BaseException) -> bool:
    """Whether pytest's junit writer raised this (a frame of its module in the traceback)."""
    traceback = exc.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename.endswith(os.path.join("_pytest", "junitxml.py")):
            return True
        traceback = traceback.tb_next
    return False


def remember_failed(config: pytest.Config, nodeids: set[str]) -> None:
    """Tell ``--lf`` about tests that became failures at the session's end (after pytest's
    cache provider saw them pass as expected failures): its ``lastfailed`` record, saved
    again."""
    plugin = config.pluginmanager.get_plugin("lfplugin")
    lastfailed = getattr(plugin, "lastfailed", None)
    cache = getattr(config, "cache", None)
    if not nodeids or not isinstance(lastfailed, dict) or cache is None:
        return
    lastfailed.update(dict.fromkeys(nodeids, True))
    cache.set("cache/lastfailed", lastfailed)


def retire_worker_terminal(config: pytest.Config) -> None:
    """An xdist worker's terminal writes to /dev/null: its per-report bookkeeping, status
    hook, progress and closing summary are computed for nobody (0.1-0.2 s of CPU per worker
    on 4,441 stored results). Its reporter is unregistered, as under ``-p no:terminal``;
    pytest's plugins expect a worker without one (live logging, pdb, assertion highlighting
    check for it), and the controller's terminal reports everything."""
    for name in ("terminalreporter", "terminalprogress-plugin"):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)


def report_fields(report: pytest.TestReport) -> dict[str, Any]:
    """A test report as plain data, as pytest-xdist sends it (pytest's own serialisation)."""
    return report._to_json()


def node_id_of(report: pytest.TestReport) -> Any:
    """A report's node id as its class keeps it, which ``TestReport`` takes back as it is:
    pytest 9's parsed structure (``_id``), the text on earlier versions."""
    return report.__dict__.get("_id") or report.nodeid


def report_from_fields(fields: dict[str, Any]) -> pytest.TestReport:
    """The report :func:`report_fields` made, rebuilt with pytest's own code."""
    return pytest.TestReport._from_json(fields)


def _fixture_info(item: pytest.Item) -> Any:
    """pytest's fixture information for an item that is not a function (no arguments), on
    pytest 8 and later (``func=None``) and on pytest 7 (``funcargs=False``)."""
    manager = item.session._fixturemanager
    if "funcargs" in inspect.signature(manager.getfixtureinfo).parameters:  # pytest 7
        return manager.getfixtureinfo(item, None, None, funcargs=False)  # type: ignore[call-arg]
    return manager.getfixtureinfo(node=item, func=None, cls=None)


def _fixture_request(item: pytest.Item) -> Any:
    """The ``request`` an item's fixtures get, as for a test function."""
    from _pytest import fixtures

    # pytest 8 and later: TopRequest; pytest 7: FixtureRequest itself
    request_type: Any = getattr(fixtures, "TopRequest", None) or fixtures.FixtureRequest
    return request_type(item, _ispytest=True)


class FixtureInfoCache:
    """Fixture information shared by items that see the same fixtures (a collector keeps one:
    conftest fixtures are seen by directory, so its items differ only by their own
    ``usefixtures`` markers)."""

    def __init__(self) -> None:
        self._infos: dict[tuple[str, ...], Any] = {}

    def info_for(self, item: pytest.Item) -> Any:
        own = tuple(
            name for mark in item.own_markers if mark.name == "usefixtures" for name in mark.args
        )
        if own not in self._infos:
            self._infos[own] = _fixture_info(item)
        return self._infos[own]


class ItemWithFixtures(pytest.Item):
    """An item that takes autouse and ``usefixtures`` fixtures like a test function, and may
    render some failures itself (:meth:`failure_text`).

    pytest's fixture machinery reads ``_fixtureinfo``, ``_request`` and ``funcargs`` of an item
    and its runner calls ``_initrequest`` before a rerun; pytest renders a set-up or teardown
    error with ``_repr_failure_py``. These are implemented here, once."""

    def __init__(self, *, fixture_infos: FixtureInfoCache | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fixture_infos = fixture_infos or FixtureInfoCache()
        self.funcargs: dict[str, Any] = {}  # the fixtures' values, as pytest fills them
        self._request: Any = None  # made when a fixture is to be set up

    @property
    def _fixtureinfo(self) -> Any:
        """Worked out when first needed, so ``usefixtures`` markers added at collection count."""
        info = self.__dict__.get("_bfcl_fixtureinfo")
        if info is None:
            info = self._bfcl_fixtureinfo = self._fixture_infos.info_for(self)
        return info

    @property
    def fixturenames(self) -> list[str]:
        return list(self._fixtureinfo.names_closure)

    def _initrequest(self) -> None:
        """pytest's runner calls this before running an item again (a rerun plugin)."""
        self.funcargs = {}
        self._request = None

    def drop_fixture_values(self) -> None:
        """Forget the fixtures' values (torn down by now), so a finished item keeps none."""
        self._initrequest()

    def fill_fixtures(self) -> None:
        """Set up the item's fixtures (nothing to do, and nothing made, when it has none)."""
        if not self._fixtureinfo.names_closure:
            return
        self._request = _fixture_request(self)
        self._request._fillfixtures()

    def failure_text(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
        """The failure's text when the item renders it itself; None for pytest's rendering."""
        return None

    def _repr_failure_py(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> Any:
        text = self.failure_text(excinfo)
        return text if text is not None else super()._repr_failure_py(excinfo, style=style)
