"""The files the plugin reads from a repository or a log folder are read bounded and never
opened when they are devices or FIFOs; the files it writes never replace a device, a FIFO, a
folder or a symbolic link, nor one of the writer's inputs (pytest_bfcl/files.py)."""

from __future__ import annotations

import os
import resource
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
