"""BFCL items' junit testcases written as text (pytest_bfcl/report/junit/cases.py): the file is
the one pytest's own writer makes (``-p no:bfcl_junit``), for every outcome an item can have
and every junit setting, with other tests in the same run."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gate_scenario import ids

from pytest_bfcl.report.junit import cases as junit_cases

# Outcomes of every shape: a skip and an error in set-up, an error in teardown after a pass and
# after a failure, an attribute recorded by a fixture, properties with characters XML forbids,
# and a test of the project's own between the entries.
CONFTEST = r"""
import pytest
from _pytest.junitxml import xml_key

@pytest.fixture(autouse=True)
def _shapes(request, record_property):
    name = request.node.name
    record_property("odd", "tab\tquote\" lt< amp& bell\x07 " + name)
    if name == "simple_python_30":
        pytest.skip("no GPU free")
    if name == "simple_python_31":
        raise RuntimeError("set-up broke")
    if name == "simple_python_32":
        request.getfixturevalue("record_xml_attribute")("owner", "team-a")
    yield
    if name in ("simple_python_33", "simple_python_104"):
        raise RuntimeError("teardown broke")

def pytest_unconfigure(config):
    xml = config.stash.get(xml_key, None)
    cases = getattr(xml, "bfcl_text_cases", None)
    with open("written.txt", "w") as fh:
        fh.write(str(cases.written if cases is not None else -1))
"""

OWN_TEST = """
def test_between():
    assert True

def test_failing():
    assert 1 == 2, "a failure of the project's own"
"""


def _normalised(path: Path) -> list[tuple[str, tuple[tuple[str, str], ...], str]]:
    """Every element in document order, without the attributes that hold times and with the
    object addresses that tracebacks print left out."""
    root = ET.parse(path).getroot()
    return [
        (
            element.tag,
            tuple(
                sorted(
                    (k, _ADDRESS.sub("0x", v))
                    for k, v in element.attrib.items()
                    if k not in ("time", "timestamp", "hostname")
                )
            ),
            _ADDRESS.sub("0x", element.text or ""),
        )
        for element in root.iter()
    ]


_ADDRESS = re.compile(r"0x[0-9a-f]+")


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["-o", "junit_family=xunit1", "--junitprefix=pre"],
        ["-o", "junit_duration_report=call", "-o", "junit_suite_name=bfcl"],
        ["-o", "junit_logging=system-out"],  # captured output in the file: pytest writes all
    ],
    ids=["default", "xunit1-prefix", "call-duration", "logging"],
)
def test_the_file_is_the_one_pytest_writes(gate_env, pytester, tmp_path, options):
    run, _ = gate_env
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_own=OWN_TEST)
    # 0..9 still fail (xfailed: known failures), 10..19 pass now (xpassed), 100..109 regress
    wrong = ids(range(10)) | ids(range(100, 110))
    files = {}
    for name, block in (("ours", []), ("pytest", ["-p", "no:bfcl_junit"])):
        junit = tmp_path / f"{name}.xml"
        result = run(wrong, f"--junitxml={junit}", "test_own.py", *options, *block, name=name)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-2000:]
        files[name] = junit
        written = int((pytester.path / "written.txt").read_text())
        if name == "pytest" or "junit_logging=system-out" in options:
            assert written == -1  # pytest's writer took every testcase
        else:
            # every entry but the skipped, broken set-up, attributed and two torn-down ones
            assert written == 400 - 5
    ours, theirs = _normalised(files["ours"]), _normalised(files["pytest"])
    assert ours == theirs
    tags = [tag for tag, _, _ in ours]
    # the entries, the two own tests, the category's summary testcase (simple_python_104's
    # teardown error follows an expected failure, pending the gate: it joins the testcase)
    assert tags.count("testcase") == 400 + 2 + 1
    assert {"failure", "skipped", "error", "property"} <= set(tags)
    assert "bfcl-testcase-" not in files["ours"].read_text()


def test_an_interrupted_session_keeps_what_pytest_would(pytester, data_source, tmp_path):
    """Items that never reached their teardown are written by pytest's writer."""
    pytester.makeconftest(
        "import pytest\n"
        "def pytest_runtest_call(item):\n"
        "    if item.name == 'simple_python_5':\n"
        "        raise KeyboardInterrupt\n"
    )
    files = {}
    for name, block in (("ours", []), ("pytest", ["-p", "no:bfcl_junit"])):
        junit = tmp_path / f"{name}.xml"
        pytester.runpytest_subprocess(  # the interrupt would stop an in-process caller too
            f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
            "--bfcl-category=simple_python", "-p", "no:cacheprovider", f"--junitxml={junit}",
            *block,
        )  # fmt: skip
        files[name] = junit
    assert _normalised(files["ours"]) == _normalised(files["pytest"])
    names = [c.get("name") for c in ET.parse(files["ours"]).getroot().iter("testcase")]
    assert names[:5] == [f"simple_python_{n}" for n in range(5)]


def test_a_file_that_cannot_be_finished_is_removed_and_named(
    gate_env, pytester, tmp_path, monkeypatch
):
    """The testcases go in after pytest wrote the file; when that fails the file (which lacks
    them) is removed and the closing part says so."""
    run, _ = gate_env

    def refuse(self, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(junit_cases.TextTestcases, "_splice", refuse)  # the run is in-process
    junit = tmp_path / "junit.xml"
    result = run(set(), f"--junitxml={junit}")
    assert result.ret == pytest.ExitCode.OK
    assert not junit.exists()
    text = result.stdout.str()
    assert "BFCL files not written" in text
    assert "No space left on device" in text and "junit.xml" in text


def _oracle_run(pytester, data_source, *args):
    return pytester.runpytest(
        f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
        "--bfcl-category=simple_python", "-p", "no:cacheprovider", "-k", "simple_python_1",
        *args,
    )  # fmt: skip


def test_a_path_that_is_no_regular_file_is_left_to_pytest(pytester, data_source, tmp_path):
    """``--junitxml=/dev/null`` (here through a link, so that nothing but the link could be
    lost), /dev/stdout or a pipe: what pytest writes there cannot be read back, so pytest's
    writer writes every testcase, and nothing is removed or reported unwritten."""
    link = tmp_path / "junit.xml"
    link.symlink_to(os.devnull)
    result = _oracle_run(pytester, data_source, f"--junitxml={link}")
    assert result.ret == pytest.ExitCode.OK
    assert link.is_symlink() and os.path.exists(os.devnull)
    assert "not written" not in result.stdout.str()


def test_a_link_to_the_file_stays_a_link(pytester, data_source, tmp_path):
    target = tmp_path / "reports" / "junit-1.xml"
    target.parent.mkdir()
    link = tmp_path / "junit.xml"
    link.symlink_to(target)
    result = _oracle_run(pytester, data_source, f"--junitxml={link}")
    assert result.ret == pytest.ExitCode.OK
    assert link.is_symlink()
    text = target.read_text("utf-8")
    assert "bfcl-testcase-" not in text and text.count("<testcase ") == 111 + 1  # + summary
    assert [p.name for p in target.parent.iterdir()] == ["junit-1.xml"]


def test_a_failed_splice_leaves_no_partial_copy(pytester, data_source, tmp_path, monkeypatch):
    """The disk fills up while the testcases go in: no half-written temporary file stays."""
    real_replace = os.replace

    def full_disk(source, target):
        if os.path.basename(source).startswith(".junit.xml."):  # the file's temporary copy
            raise OSError(28, "No space left on device")
        return real_replace(source, target)

    monkeypatch.setattr(os, "replace", full_disk)
    junit = tmp_path / "junit.xml"
    result = _oracle_run(pytester, data_source, f"--junitxml={junit}")
    assert "No space left on device" in result.stdout.str()
    assert list(tmp_path.iterdir()) == []


LATE_ATTRIBUTE = r"""
import pytest
from _pytest.junitxml import xml_key

@pytest.fixture(autouse=True)
def late_attribute(request):
    yield
    if request.node.name in ("simple_python_1", "simple_python_12"):
        xml = request.config.stash.get(xml_key, None)
        if xml is not None:  # as record_xml_attribute asked for after set-up does
            xml.node_reporter(request.node.nodeid).add_attribute("owner", "team-a")
"""


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_an_attribute_recorded_after_set_up_joins_the_testcase(
    pytester, data_source, tmp_path, family
):
    """pytest's writer goes on with a testcase begun after set-up: no second, nameless one."""
    pytester.makeconftest(LATE_ATTRIBUTE)
    files = {}
    for name, block in (("ours", []), ("pytest", ["-p", "no:bfcl_junit"])):
        files[name] = tmp_path / f"{name}.xml"
        result = _oracle_run(
            pytester, data_source, f"--junitxml={files[name]}", "-o", f"junit_family={family}",
            *block,
        )  # fmt: skip
        assert result.ret == pytest.ExitCode.OK
    assert _normalised(files["ours"]) == _normalised(files["pytest"])
    names = [c.get("name") for c in ET.parse(files["ours"]).getroot().iter("testcase")]
    assert None not in names
