"""BFCL items' junit testcases, written as text as each item finishes.

pytest's junit writer builds an XML element per testcase from each of an item's three reports,
keeps every element to the end of the session and serialises them all there: for thousands of
BFCL items that is a fifth of a run scoring stored results. For the shapes BFCL items take
(set-up passed; the call passed, failed, xfailed or xpassed; teardown passed) this module
writes the same testcase text itself, once, when the item's teardown is reported; pytest still
writes the file (suite, counts, every other test, session properties) and leaves a marker
element where each of these testcases goes, which is replaced by its text once the file is
written. Everything else (a skipped or failed set-up, a failed teardown, a testcase a fixture
added attributes to, at set-up or later) is handed to pytest's writer as it would have been; so
is everything when captured output goes into the file (``junit_logging``), when the path is
no regular file to read back (``/dev/null``, ``/dev/stdout``, a pipe), when pytest's writer
is not of the shape this knows (another pytest version), or with ``-p no:bfcl_junit``.

The content is pytest's: names, properties and messages are made with pytest's own helpers
(``mangle_test_address``, ``bin_xml_escape``, ``shorten_message`` where the version has it;
reached through ``pytest_private``), and the tests compare the
file with the one pytest writes alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.files import os_error_text, write_text_atomic
from pytest_bfcl.pytest_private import JunitHelpers, junitxml_writer

# ``-p no:bfcl_junit`` leaves every testcase to pytest's writer.
PLUGIN_NAME = "bfcl_junit"


def install_text_testcases(config: pytest.Config, prefix: str) -> TextTestcases | None:
    """Have pytest's junit writer (when ``--junitxml`` is given) leave the testcases of the
    items whose node ids begin with ``prefix`` to a :class:`TextTestcases`; None when it
    keeps them all."""
    if config.pluginmanager.is_blocked(PLUGIN_NAME):
        return None
    writer = junitxml_writer(config)
    if writer is None:
        return None
    xml, helpers = writer
    if xml.logging != "no" or xml.family not in helpers.families:
        return None  # captured output goes into testcases: pytest's writer does that
    if not _regular_or_absent(xml.logfile):
        return None  # /dev/stdout, /dev/null, a pipe: what pytest writes cannot be read back
    base: Any = type(xml)
    cases = TextTestcases(xml, helpers, prefix, base.pytest_runtest_logreport)
    config.pluginmanager.unregister(xml)
    xml.__class__ = _with_text_testcases(base)
    setattr(xml, "bfcl_text_cases", cases)  # noqa: B010  (an attribute its class lacks)
    config.pluginmanager.register(xml)
    return cases


def _regular_or_absent(logfile: str) -> bool:
    """Whether the junit path is a regular file (through any links) or not there yet (pytest
    makes it one): the only kind the testcases can be spliced into after pytest wrote it."""
    try:
        return stat.S_ISREG(os.stat(logfile).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _with_text_testcases(base: Any) -> type:
    """pytest's writer class, with BFCL items' reports going to its :class:`TextTestcases`."""

    def pytest_runtest_logreport(self: Any, report: pytest.TestReport) -> None:
        if not self.bfcl_text_cases.take(report):
            base.pytest_runtest_logreport(self, report)

    def pytest_sessionfinish(self: Any) -> None:
        self.bfcl_text_cases.before_write()
        base.pytest_sessionfinish(self)
        self.bfcl_text_cases.after_write()

    return type(
        f"{base.__name__}WithTextTestcases",
        (base,),
        {
            "pytest_runtest_logreport": pytest_runtest_logreport,
            "pytest_sessionfinish": pytest_sessionfinish,
        },
    )


class _Case:
    """One BFCL item's testcase while its reports arrive. It stands in pytest's list of
    testcases where the testcase goes: pytest writes it as an empty element of a tag no file
    holds otherwise, which the text replaces."""

    __slots__ = ("child", "duration", "longreprs", "reports", "stats", "tag", "text")

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.reports: list[pytest.TestReport] = []
        self.longreprs: list[Any] = []  # as each report arrived (others may shorten them)
        self.duration = 0.0
        self.child = ""  # the failure or skipped element's text
        self.stats: list[str] = []  # pytest's counters this testcase raised
        self.text: str | None = None  # the testcase, once the item's teardown is reported

    def to_xml(self) -> ET.Element:
        return ET.Element(self.tag)


class TextTestcases:
    """The testcases of one session's BFCL items, as text, and where they go in the file."""

    def __init__(
        self,
        xml: Any,
        helpers: JunitHelpers,
        prefix: str,
        pytest_logreport: Callable[[Any, Any], None],
    ) -> None:
        self.xml = xml
        self._escape = helpers.escape
        self._mangle = helpers.mangle
        self._parents: dict[str, list[str]] = {}  # mangled names of a parent node id
        self._shorten = helpers.shorten
        # xunit1 keeps every attribute; the other families keep those they list.
        self._allowed: list[str] | None = (
            None if xml.family == "xunit1" else list(helpers.families[xml.family]["testcase"])
        )
        self._prefix = prefix
        self._all_durations = xml.report_duration == "total"
        self._pytest_logreport = pytest_logreport
        self._tag = f"bfcl-testcase-{secrets.token_hex(8)}"
        self._open: dict[tuple[str, Any], _Case] = {}
        self._finished = 0
        self.written = 0
        self.not_written: str | None = None  # why the testcases could not be put in the file

    # -- reports ---------------------------------------------------------------------------

    def take(self, report: pytest.TestReport) -> bool:
        """Whether this report is written here (otherwise pytest's writer takes it)."""
        nodeid = report.nodeid
        if not nodeid.startswith(self._prefix):
            return False
        key = (nodeid, getattr(report, "node", None))
        case = self._open.get(key)
        if case is None:
            # pytest's writer keys its testcases by the report's structured id where it has one
            begun = (getattr(report, "id", nodeid), key[1]) in self.xml.node_reporters
            if not (report.when == "setup" and report.passed) or begun:
                return False  # not a shape written here, or a testcase a fixture began
            case = _Case(self._tag)
            self._open[key] = case
            self.xml.node_reporters_ordered.append(case)
        case.reports.append(report)
        case.longreprs.append(report.longrepr)
        when = report.when
        if self._all_durations or when == "call":
            case.duration += getattr(report, "duration", 0.0)
        if when == "call":
            if not self._add_call(case, report):
                self._hand_over(key, case)
        elif when == "teardown":
            del self._open[key]
            begun = (getattr(report, "id", nodeid), key[1]) in self.xml.node_reporters
            if report.passed and len(case.reports) == 3 and not begun:
                self._finish(case, report)
            else:
                self._hand_over(key, case, still_open=False)
        return True

    def _add_call(self, case: _Case, report: pytest.TestReport) -> bool:
        xfail = hasattr(report, "wasxfail")
        if report.passed:
            case.stats.append("passed")
        elif report.failed and xfail:  # a strict xfail that passed
            # pytest writes this element's missing text as "None"
            case.child = self._element(
                "skipped", [("message", _UNEXPECTED_PASS)], self._escape(None)
            )
            case.stats.append("skipped")
        elif report.failed:
            longrepr = report.longrepr
            crash = getattr(longrepr, "reprcrash", None)
            message = crash.message if crash is not None else str(longrepr)
            attrs = [("message", self._escape(self._shorten(message)))]
            case.child = self._element("failure", attrs, self._escape(str(longrepr)))
            case.stats.append("failure")
        elif report.skipped and xfail:
            reason = self._escape(str(report.wasxfail).removeprefix("reason: "))
            case.child = self._element("skipped", [("type", "pytest.xfail"), ("message", reason)])
            case.stats.append("skipped")
        else:
            return False  # skipped in the call: pytest's writer
        return True

    def _finish(self, case: _Case, teardown: pytest.TestReport) -> None:
        for name in case.stats:
            self.xml.add_stats(name)
        case.text = self._testcase(case, teardown)
        self._finished += 1

    def _hand_over(self, key: tuple[str, Any], case: _Case, still_open: bool = True) -> None:
        """Give what this testcase had so far to pytest's writer, at the testcase's place."""
        if still_open:
            del self._open[key]
        ordered = self.xml.node_reporters_ordered
        place = ordered.index(case)
        del ordered[place]
        # A testcase pytest's writer began meanwhile (an attribute recorded after set-up) is
        # the one it goes on with: it moves to the testcase's place too.
        report = case.reports[0]
        begun = self.xml.node_reporters.get((getattr(report, "id", report.nodeid), key[1]))
        if begun is not None and begun in ordered:
            ordered.remove(begun)
        first_new = len(ordered)
        if begun is not None:
            ordered.append(begun)
        for report, longrepr in zip(case.reports, case.longreprs, strict=True):
            now, report.longrepr = report.longrepr, longrepr
            try:
                self._pytest_logreport(self.xml, report)
            finally:
                report.longrepr = now
        made = ordered[first_new:]
        del ordered[first_new:]
        ordered[place:place] = made

    # -- the file --------------------------------------------------------------------------

    def before_write(self) -> None:
        """Items that did not finish (an interrupted session) go to pytest's writer, which
        writes what it has of them."""
        for key, case in list(self._open.items()):
            self._hand_over(key, case)

    def after_write(self) -> None:
        """Put the testcases where pytest's file has their markers. A file they cannot be
        put in is removed (it would lack them) and the reason kept for the closing part."""
        if not self._finished:
            return
        # the file itself where the path is a link to it (the link stays a link)
        path = Path(os.path.realpath(self.xml.logfile))
        if not path.is_file():
            self.not_written = "not a regular file"  # nothing of it is removed
            return
        try:
            self.not_written = self._splice(path)
        except OSError as exc:
            self.not_written = os_error_text(exc)
        if self.not_written is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def _splice(self, path: Path) -> str | None:
        text = path.read_text("utf-8")
        marker = f"<{self._tag} />"
        pieces = text.split(marker)
        texts = [
            case.text
            for case in self.xml.node_reporters_ordered
            if isinstance(case, _Case) and case.text is not None
        ]
        if len(pieces) != len(texts) + 1:
            return f"{len(texts)} BFCL testcases, {len(pieces) - 1} places for them in the file"
        merged = [pieces[0]]
        for case_text, piece in zip(texts, pieces[1:], strict=True):
            merged += (case_text, piece)
        write_text_atomic(path, merged)
        self.written = len(texts)
        return None

    # -- text ------------------------------------------------------------------------------

    def _names(self, nodeid: str) -> list[str]:
        """pytest's names for a node id (``mangle_test_address``), worked out once per parent:
        an item named plainly (no parameters) adds its name to its parent's."""
        parent, sep, name = nodeid.rpartition("::")
        if not sep or "[" in name:
            return self._mangle(nodeid)
        names = self._parents.get(parent)
        if names is None:
            names = self._parents[parent] = self._mangle(nodeid)[:-1]
        return [*names, name]

    def _testcase(self, case: _Case, teardown: pytest.TestReport) -> str:
        names = self._names(teardown.nodeid)
        classnames = names[:-1]
        if self.xml.prefix:
            classnames.insert(0, self.xml.prefix)
        location = teardown.location
        attrs: dict[str, str] = {
            "classname": ".".join(classnames),
            "name": self._escape(names[-1]),
            "file": location[0],
        }
        if location[1] is not None:
            attrs["line"] = str(location[1])
        if hasattr(teardown, "url"):
            attrs["url"] = teardown.url
        if self._allowed is not None:
            attrs = {k: v for k, v in attrs.items() if k in self._allowed}
        head = "<testcase" + _attributes([*attrs.items(), ("time", f"{case.duration:.3f}")])
        props = []
        for name, value in teardown.user_properties:
            text = str(value)
            # pytest's escape leaves printable ASCII as it is: most values need no call
            if not (text.isascii() and text.isprintable()):
                text = self._escape(text)
            props.append(
                f'<property name="{_escape_attribute(str(name))}" '
                f'value="{_escape_attribute(text)}" />'
            )
        body = (f"<properties>{''.join(props)}</properties>" if props else "") + case.child
        return f"{head}>{body}</testcase>" if body else f"{head} />"

    @staticmethod
    def _element(tag: str, attrs: list[tuple[str, str]], text: str | None = None) -> str:
        head = f"<{tag}{_attributes(attrs)}"
        return f"{head}>{_escape_text(text)}</{tag}>" if text else f"{head} />"


_UNEXPECTED_PASS = "xfail-marked test passes unexpectedly"


def _attributes(pairs: list[tuple[str, str]]) -> str:
    return "".join(f' {name}="{_escape_attribute(value)}"' for name, value in pairs)


_ATTRIBUTE_SPECIAL = re.compile('[&<>"\r\n\t]')


def _escape_attribute(text: str) -> str:
    """An attribute value escaped as ElementTree writes it."""
    if _ATTRIBUTE_SPECIAL.search(text) is None:
        return text
    text = _escape_text(text)
    for char, entity in (('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;")):
        if char in text:
            text = text.replace(char, entity)
    return text


def _escape_text(text: str) -> str:
    """Element text escaped as ElementTree writes it."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text
