"""The files the plugin reads from a repository or a log folder are read bounded and never
opened when they are devices or FIFOs; the files it writes never replace a device, a FIFO, a
folder or a symbolic link, nor one of the writer's inputs (pytest_bfcl/files.py)."""

from __future__ import annotations

import os
import re
import resource
import stat
import time
from pathlib import Path

import pytest

from pytest_bfcl.files import (
    NotARegularFile,
    output_problem,
    read_file_tail,
    read_problem,
    read_regular_file,
    read_small_text,
    write_json_atomic,
    write_text_atomic,
)


def test_a_regular_file_and_a_link_to_one_are_read(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    assert read_small_text(tmp_path / "b.json", 10) == "{}"
    with pytest.raises(NotARegularFile, match="is a symbolic link"):
        read_small_text(tmp_path / "b.json", 10, follow_symlinks=False)


def test_a_link_to_dev_zero_is_refused_unopened_in_no_time_and_memory(tmp_path):
    (tmp_path / "zero").symlink_to("/dev/zero")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with pytest.raises(NotARegularFile) as refused:
        read_regular_file(tmp_path / "zero", 1 << 30)
    assert time.perf_counter() - started < 1
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 10_000  # KB
    assert read_problem(refused.value) == "it points to a character device, not a regular file"


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    started = time.perf_counter()
    with pytest.raises(NotARegularFile, match="is a FIFO"):
        read_regular_file(tmp_path / "fifo", 100)
    with pytest.raises(NotARegularFile, match="is a FIFO"):
        read_file_tail(tmp_path / "fifo", 100)
    assert time.perf_counter() - started < 1


def test_a_folder_and_an_oversized_file_are_refused(tmp_path):
    with pytest.raises(NotARegularFile, match="is a directory"):
        read_regular_file(tmp_path, 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(OSError) as refused:
        read_regular_file(tmp_path / "big", 100)
    assert read_problem(refused.value) == "it is larger than 100 bytes (101)"


def test_a_logs_tail_is_its_last_bytes(tmp_path):
    (tmp_path / "log").write_bytes(b"a" * 1000 + b"end")
    assert read_file_tail(tmp_path / "log", 5) == b"aaend"


@pytest.mark.parametrize(
    "make,words",
    [
        (lambda p: os.mkfifo(p), "is a FIFO; give the path of a file to write"),
        (lambda p: p.mkdir(), "is a directory; give the path of a file to write"),
        (lambda p: p.symlink_to("/dev/null"), "is a symbolic link"),
        (lambda p: p.symlink_to(p.with_name("real")), "is a symbolic link"),
    ],
)
def test_a_write_never_replaces_what_is_not_a_regular_file(tmp_path, make, words):
    target = tmp_path / "out.json"
    (tmp_path / "real").write_text("kept")
    make(target)
    assert output_problem(target) == words or words in (output_problem(target) or "")
    with pytest.raises(NotARegularFile, match=words.split(";")[0]):
        write_json_atomic(target, {"a": 1})
    assert (tmp_path / "real").read_text() == "kept"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json.")]


def test_a_character_device_is_never_replaced():
    problem = output_problem(Path("/dev/null"))
    assert problem == "is a character device; give the path of a file to write"
    with pytest.raises(NotARegularFile):
        write_text_atomic(Path("/dev/null"), "x")
    assert Path("/dev/null").is_char_device()


def test_a_writers_own_input_is_refused(tmp_path):
    source = tmp_path / "in.json"
    source.write_text("{}")
    (tmp_path / "alias.json").symlink_to(source)
    assert output_problem(source, [tmp_path / "alias.json"]) == (
        f"is {tmp_path / 'alias.json'}, one of the files read; give another path"
    )
    assert output_problem(tmp_path / "new.json", [source]) is None
    assert output_problem(source, [tmp_path / "other.json"]) is None


# -- the readers that use it -----------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_bfcl"
# Files read whole by other means: the package's own data and assets, the pinned lock shipped
# with it, and the junit file pytest itself has just written at that path.
READ_ELSEWHERE = {
    "resources.py",
    "report/html/page.py",
    "history/page.py",
    "report/junit/summary.py",
    "report/junit/cases.py",
}
_UNBOUNDED = re.compile(r"\.read_text\(|\.read_bytes\(|\.open\(\"rb\"\)|json\.load\(")


def test_every_file_the_plugin_reads_goes_through_the_bounded_reader():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith("testing/") or name == "files.py":
            continue  # test doubles
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            lock = name == "dataset/fetch.py" and "DatasetLock" in line  # shipped with it
            script = "sys.stdin" in line or "slice.json" in line  # code a child process runs
            if _UNBOUNDED.search(line) and name not in READ_ELSEWHERE and not (lock or script):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []


@pytest.fixture
def hostile(tmp_path):
    """Make ``path`` a FIFO or a link to /dev/zero."""

    def make(path: Path, kind: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
        return path

    return make


KINDS = ["fifo", "zero"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_web_recording_that_is_no_file_is_a_miss_in_one_line(tmp_path, hostile, kind):
    from pytest_bfcl.web.cassette import Cassette, CassetteMiss

    cassette = Cassette(tmp_path)
    request = {"url": "https://example.com"}
    hostile(cassette._path("fetch", request), kind)
    with pytest.raises(CassetteMiss, match="not a regular file") as miss:
        cassette.load("fetch", request)
    assert "\n" not in str(miss.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_data_file_that_is_no_file_is_refused_in_one_line(tmp_path, hostile, kind):
    from pytest_bfcl.dataset.fetch import DatasetError
    from pytest_bfcl.dataset.load import read_jsonl

    path = hostile(tmp_path / "BFCL_v4_simple_python.json", kind)
    with pytest.raises(DatasetError, match="not a regular file") as refused:
        list(read_jsonl(path))
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_death_notice_that_is_no_file_is_no_death(tmp_path, hostile, kind):
    from pytest_bfcl.servers.server_process import death_file, published_death

    hostile(death_file(tmp_path / "server.log"), kind)
    assert published_death(tmp_path / "server.log") is None


@pytest.mark.parametrize("kind", KINDS)
def test_a_checkpoint_file_that_is_no_file_never_hangs_its_identity(tmp_path, hostile, kind):
    from pytest_bfcl.servers.checkpoint_identity import file_identity

    path = hostile(tmp_path / "model.safetensors", kind)
    started = time.perf_counter()
    assert b"unreadable NotARegularFile" in file_identity(path, "model.safetensors")
    assert time.perf_counter() - started < 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_failure_notice_that_is_no_file_is_said(tmp_path, hostile, kind):
    from pytest_bfcl.servers.start_request import _message

    path = hostile(tmp_path / "failed", kind)
    assert "failure notice" in _message(path) and "not a regular file" in _message(path)


@pytest.mark.parametrize("kind", KINDS)
def test_a_result_file_that_is_no_file_stops_its_writes_with_one_warning(tmp_path, hostile, kind):
    from pytest_bfcl.run.results_dir import _append_whole

    path = hostile(tmp_path / "BFCL_v4_simple_python_result.json", kind)
    started = time.perf_counter()
    with pytest.raises(OSError):
        _append_whole(path, b"{}\n")
    assert time.perf_counter() - started < 1


def test_csv_tables_and_a_chart_never_replace_a_device(tmp_path):
    from pytest_bfcl.report.csv_tables import write_csv_tables

    os.mkfifo(tmp_path / "data_overall.csv")
    with pytest.raises(NotARegularFile, match="is a FIFO"):
        write_csv_tables(tmp_path, {"data_overall.csv": "a,b\n"})
    assert stat.S_ISFIFO(os.lstat(tmp_path / "data_overall.csv").st_mode)


def test_the_step_summary_is_appended_to_a_regular_file_only(tmp_path):
    from pytest_bfcl.report.finish import _append

    os.mkfifo(tmp_path / "summary.md")
    started = time.perf_counter()
    with pytest.raises(NotARegularFile):
        _append(tmp_path / "summary.md", "| a |\n")
    assert time.perf_counter() - started < 1
    (tmp_path / "real.md").write_text("before\n")
    _append(tmp_path / "real.md", "after\n")
    assert (tmp_path / "real.md").read_text() == "before\nafter\n"


@pytest.mark.parametrize("kind", KINDS)
def test_a_stored_result_or_score_file_that_is_no_file_is_one_line(tmp_path, hostile, kind):
    from pytest_bfcl.conformance.results import ResultsError, read_result_file
    from pytest_bfcl.conformance.score_files import ScoreFileError, parse_score_file

    result = hostile(tmp_path / "BFCL_v4_simple_python_result.json", kind)
    with pytest.raises(ResultsError, match="not a regular file"):
        read_result_file(result)
    score = hostile(tmp_path / "BFCL_v4_simple_python_score.json", kind)
    with pytest.raises(ScoreFileError, match="not a regular file"):
        parse_score_file(score)
