"""Entry records packed where the entry finished and rendered where the page is built, in the
session or in a builder process of its own (pytest_bfcl/report/html/records.py,
html_builder.py): the page's data is the same either way, hostile values included, and a
builder that dies makes the HTML report "not written" without losing anything else."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_bfcl.report.html.builder import HtmlBuilder, HtmlBuilderError
from pytest_bfcl.report.html.entries import HtmlEntries, parts_of, script_safe
from pytest_bfcl.report.html.facts import (
    fields_from_facts,
    functions_json,
    functions_key,
    record_facts,
)
from pytest_bfcl.report.html.page import read_script_element
from pytest_bfcl.report.html.records import DocsRefs, encode_record


class _Entry:
    id = "simple_python_7"
    category = "simple_python"
    question = [[{"role": "user", "content": "What is 2 + 2?"}]]


class _OddText(str):
    """A str subclass: marshal refuses it."""


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


DOCS = [{"name": "add", "description": "adds é\ud800", "parameters": {"b": 1, "a": [2]}}]


def _facts(decoded: Any, result: Any = "[add(a=2, b=2)]") -> tuple[Any, ...]:
    """An entry's facts as a run takes them, with values as a decoder may leave them (a
    verdict holds them as they are: stand-ins for the models here)."""
    verdict = SimpleNamespace(valid=False, error_type="x:y", errors=["bad", {"k": [1, 2.5]}],
                              decoded=decoded, expected=[{"add": {"a": [2]}}],
                              report=["turn 0"], passes=None, samples=None)  # fmt: skip
    generation = SimpleNamespace(result=result, reasoning=None, latency=0.5, input_tokens=3,
                                 output_tokens=4, details={"inference_log": [{"q": "x"}]})  # fmt: skip
    return record_facts(entry=_Entry, outcome="failed", verdict=verdict, generation=generation,
                        baseline_valid=True, message=None, known_error=None)  # fmt: skip


SHARED = [[0] * 1000] * 1000  # a million elements once expanded, a thousand stored
VALUES = {
    "plain": [{"add": {"a": 2, "b": 2}}],
    "shared": SHARED,
    "nan-and-huge-int": [float("nan"), 10**5000, {1, 2}, (3, 4)],
    "odd-type": [_OddText("looks like text")],  # marshal refuses: rendered where it finished
    "too-deep": _nested(5000),  # deeper than marshal goes: rendered where it finished
}


@pytest.mark.parametrize("decoded", list(VALUES.values()), ids=list(VALUES))
def test_a_packed_record_renders_as_the_record_does(decoded):
    facts = _facts(decoded)
    refs = DocsRefs("main")
    entries = HtmlEntries()
    entries.add_packed(encode_record(facts, *refs.ref(DOCS)))
    expected = parts_of(fields_from_facts(facts, functions_key(DOCS)))
    assert entries.rows == [expected["index"]]
    assert entries.details() == (script_safe(expected["details"]), False)


def test_docs_travel_once_and_unmarshallable_docs_as_json():
    refs = DocsRefs("gw0")
    entries = HtmlEntries()
    odd_docs = [{"name": _OddText("f")}]
    for docs in (DOCS, DOCS, odd_docs):
        entries.add_packed(encode_record(_facts(None), *refs.ref(docs)))
    data, _ = entries.data({})
    table = json.loads(data)["functions"]
    assert table == {functions_key(DOCS): DOCS, functions_key(odd_docs): [{"name": "f"}]}
    keys = [json.loads(row).get("functions_key") for row in entries.rows]
    assert keys == [None, None, None]  # the key is a detail, not an index field
    details = [json.loads(line) for line in entries.details()[0].split("\n")]
    assert [d["functions_key"] for d in details] == [functions_key(DOCS)] * 2 + [
        functions_key(odd_docs)
    ]
    assert script_safe(functions_json(DOCS)) in data  # encoded once, escaped for the page


def _records(count: int) -> list[bytes]:
    refs = DocsRefs("main")
    return [encode_record(_facts(value), *refs.ref(DOCS))
            for value in (list(VALUES.values()) * count)[:count]]  # fmt: skip


def test_the_builder_process_builds_the_same_page_data():
    records = _records(200)
    here = HtmlEntries()
    for record in records:
        here.add_packed(record)
    builder = HtmlBuilder.start()
    assert builder is not None
    try:
        for record in records:
            builder.add_packed(record)
        rest = {"categories": ["simple_python"], "gated": False}
        assert len(builder) == len(here) == 200
        assert builder.categories == here.categories == {"simple_python"}
        assert builder.data(rest) == here.data(rest)
        assert builder.details() == here.details()
    finally:
        builder.close()


def test_a_builder_that_dies_says_so_and_why():
    builder = HtmlBuilder.start()
    assert builder is not None
    try:
        os.kill(builder._process.pid, signal.SIGKILL)
        records = _records(50)
        while not builder._broken.wait(0.01):  # the pipe's writer finds out
            builder.add_packed(records[0] * 2000)  # batches big enough to be written at once
        for record in records:
            builder.add_packed(record)
        assert builder._pending == []  # nothing more is kept for a builder that is gone
        with pytest.raises(HtmlBuilderError, match=r"builder process ended .*exit status -9"):
            len(builder)
        with pytest.raises(OSError):  # written by write_reports as "not written"
            builder.data({})
    finally:
        builder.close()


def test_a_session_with_a_builder_writes_the_page_a_session_alone_writes(
    pytester, data_source, tmp_path, monkeypatch
):
    """Whole runs (pytest's own command line, so the builder is used), with and without."""
    pages = {}
    for switch in ("1", "0"):
        page = tmp_path / f"page-{switch}.html"
        monkeypatch.setenv("PYTEST_BFCL_HTML_BUILDER", switch)
        result = pytester.runpytest_subprocess(
            f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle:fail=0.3,seed=5",
            "--bfcl-category=simple_python,multi_turn_base", "-p", "no:cacheprovider",
            f"--bfcl-html={page}", "-k", "simple_python_1 or multi_turn_base_1",
        )  # fmt: skip
        assert result.ret in (0, 1), result.stdout.str()[-2000:]
        pages[switch] = page.read_text("utf-8")
    for element in ("bfcl-data", "bfcl-details"):
        assert read_script_element(pages["1"], element) == read_script_element(pages["0"], element)
    assert len(json.loads(read_script_element(pages["1"], "bfcl-data"))["records"]) > 100


@pytest.mark.skipif(sys.platform == "win32", reason="signals")
def test_a_killed_builder_leaves_every_other_file_written(pytester, data_source, tmp_path):
    pytester.makeconftest(
        "import os, signal\n"
        "import pytest\n"
        "@pytest.hookimpl(trylast=True)\n"
        "def pytest_collection_finish(session):\n"
        "    plugin = session.config.pluginmanager.get_plugin('bfcl-session')\n"
        "    builder = getattr(plugin, 'html_entries', None)\n"
        "    process = getattr(builder, '_process', None)\n"
        "    if process is not None:\n"
        "        os.kill(process.pid, signal.SIGKILL)\n"
    )
    page, report = tmp_path / "page.html", tmp_path / "report.json"
    result = pytester.runpytest_subprocess(
        f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
        "--bfcl-category=simple_python", "-p", "no:cacheprovider",
        f"--bfcl-html={page}", f"--bfcl-report={report}",
    )  # fmt: skip
    text = result.stdout.str()
    assert result.ret == 0, text[-2000:]
    assert not page.exists() and report.is_file()
    assert "BFCL files not written" in text and "builder process ended" in text


def _ignores_sigint(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as fh:
        mask = next(int(line.split()[1], 16) for line in fh if line.startswith("SigIgn:"))
    return bool(mask & (1 << (signal.SIGINT - 1)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, /proc")
def test_ctrl_c_is_the_sessions_the_builder_still_builds_the_page():
    """Ctrl-C in a terminal signals the whole foreground group: the builder is outside it and
    ignores the signal, so an interrupted session still gets the page of what ran."""
    records = _records(20)
    builder = HtmlBuilder.start()
    assert builder is not None
    try:
        assert os.getpgid(builder._process.pid) != os.getpgid(0)
        deadline = time.monotonic() + 30
        while not _ignores_sigint(builder._process.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(builder._process.pid, signal.SIGINT)
        for record in records:
            builder.add_packed(record)
        assert len(builder) == 20
        here = HtmlEntries()
        for record in records:
            here.add_packed(record)
        assert builder.data({}) == here.data({})
    finally:
        builder.close()


def test_the_builder_imports_the_package_the_session_runs(tmp_path, monkeypatch):
    """A stale copy of the package in the working directory (an old checkout, say) is not
    the builder's: it runs the code the session loaded."""
    stale = tmp_path / "pytest_bfcl" / "report"
    stale.mkdir(parents=True)
    (tmp_path / "pytest_bfcl" / "__init__.py").write_text("")
    (stale / "__init__.py").write_text("")
    (stale / "html_builder.py").write_text("raise SystemExit('a stale copy')\n")
    monkeypatch.chdir(tmp_path)
    builder = HtmlBuilder.start()
    assert builder is not None
    try:
        for record in _records(5):
            builder.add_packed(record)
        assert len(builder) == 5
    finally:
        builder.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, /proc")
def test_a_stopped_builder_is_ended_and_the_page_not_written(monkeypatch):
    from pytest_bfcl.report.html import answer_deadline

    monkeypatch.setattr(answer_deadline, "STOPPED_GRACE", 0.5)
    builder = HtmlBuilder.start()
    assert builder is not None
    try:
        for record in _records(20):
            builder.add_packed(record)
        os.kill(builder._process.pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(HtmlBuilderError, match=r"builder process was stopped .*ended"):
            len(builder)
        assert time.monotonic() - started < 30
        assert builder._process.wait(timeout=10) == -signal.SIGKILL
        with pytest.raises(OSError):  # written by write_reports as "not written"
            builder.data({})
    finally:
        builder.close()


def test_a_builder_that_does_not_answer_in_time_is_ended(monkeypatch):
    from pytest_bfcl.report.html import answer_deadline

    monkeypatch.setattr(answer_deadline, "ANSWER_DEADLINE", 0.5)
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               stdout=subprocess.PIPE)  # fmt: skip
    try:
        with pytest.raises(TimeoutError, match=r"did not answer within 0\.5 s"):
            answer_deadline.read_by_deadline(process, lambda: process.stdout.read(1))
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, /proc")
def test_a_stopped_builder_leaves_every_other_file_written(pytester, data_source, tmp_path):
    pytester.makeconftest(
        "import os, signal\n"
        "import pytest\n"
        "from pytest_bfcl.report.html import answer_deadline\n"
        "answer_deadline.STOPPED_GRACE = 1.0\n"
        "@pytest.hookimpl(trylast=True)\n"
        "def pytest_collection_finish(session):\n"
        "    plugin = session.config.pluginmanager.get_plugin('bfcl-session')\n"
        "    process = getattr(getattr(plugin, 'html_entries', None), '_process', None)\n"
        "    if process is not None:\n"
        "        os.kill(process.pid, signal.SIGSTOP)\n"
    )
    page, report = tmp_path / "page.html", tmp_path / "report.json"
    result = pytester.runpytest_subprocess(
        f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
        "--bfcl-category=simple_python", "-p", "no:cacheprovider",
        f"--bfcl-html={page}", f"--bfcl-report={report}", "-k", "simple_python_1",
        timeout=120,
    )  # fmt: skip
    text = result.stdout.str()
    assert result.ret == 0, text[-2000:]
    assert not page.exists() and report.is_file()
    assert "BFCL files not written" in text and "builder process was stopped" in text
