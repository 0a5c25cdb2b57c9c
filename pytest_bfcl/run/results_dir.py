"""Writing generations in the reference's result layout (``--bfcl-results-dir``), so the
reference's evaluator can score our generations and ``replay:`` can score them again.

``DIR/<model>/<group>/BFCL_v4_<category>_result.json``, JSON Lines of ``{"id", "result",
"latency", "input_token_count", "output_token_count", ...}``. Several processes (xdist
workers) append to the same files under an exclusive lock; at the end of the session each file
is rewritten in the dataset's order, keeping the last record of an id.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.categories import category_of_id
from pytest_bfcl.dataset.layout import RESULT_FILE_GLOB, ResultLayout, model_dir_name
from pytest_bfcl.files import (
    NotARegularFile,
    WritePlace,
    json_bytes,
    open_regular_file,
    write_bytes_atomic,
)
from pytest_bfcl.kinds import sort_key
from pytest_bfcl.models.base import Generation


def sample_dir(root: Path, sample: int, samples: int) -> Path:
    """Where one sample's result set goes: the directory itself with one sample,
    ``sample-<k>`` (from 1) inside it with several."""
    return root if samples == 1 else root / f"sample-{sample + 1}"


def result_record(generation: Generation) -> dict[str, Any]:
    record: dict[str, Any] = {"id": generation.id, "result": generation.result}
    details = generation.details or {}
    if details:  # multi-step: per-turn, per-step measurements and the inference log
        record["latency"] = details.get("latency")
        record["input_token_count"] = details.get("input_token_count")
        record["output_token_count"] = details.get("output_token_count")
        record["inference_log"] = details.get("inference_log")
    else:
        record["latency"] = generation.latency
        record["input_token_count"] = generation.input_tokens
        record["output_token_count"] = generation.output_tokens
    # The reference's field: per turn, per step for a conversation, one text otherwise; only
    # when there was any reasoning.
    if details.get("reasoning_content"):
        record["reasoning_content"] = details["reasoning_content"]
    elif generation.reasoning:
        record["reasoning_content"] = generation.reasoning
    return record


class ResultsWriter:
    def __init__(self, directory: Path, model: str) -> None:
        self.root = directory / model_dir_name(model)
        self.layout = ResultLayout(self.root)
        # a full or read-only disk: one warning, then nothing more is written (scoring goes on)
        self.place = WritePlace("results directory")

    def path_for(self, category: str) -> Path:
        return self.layout.category_file(category)

    def write(self, generation: Generation, path: Path | None = None) -> None:
        """Append one generation (safe across processes), to its category's file or ``path``:
        one whole line, or nothing (a write that fails half-way is cut off again)."""
        if self.place.stopped:
            return
        path = path or self.path_for(category_of_id(generation.id))
        line = json_bytes(result_record(generation), default=str) + b"\n"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _append_whole(path, line)
        except OSError as exc:
            self.place.failed(path, exc)

    def finalize(self) -> list[Path]:
        """Rewrite every result file sorted in dataset order, one record per id (not after a
        failed write: the files hold whole lines as they are)."""
        written: list[Path] = []
        if self.place.stopped:
            return written
        for path in sorted(self.root.rglob(RESULT_FILE_GLOB)):
            records: dict[str, bytes] = {}
            try:
                with open_regular_file(path, follow_symlinks=False) as fh:
                    for line in fh:
                        if line.strip():
                            records[json.loads(line)["id"]] = line.rstrip(b"\n") + b"\n"
                ordered = sorted(records, key=sort_key)
                write_bytes_atomic(path, b"".join(records[i] for i in ordered))
            except OSError as exc:
                self.place.failed(path, exc)
                break
            written.append(path)
        return written


def _append_whole(path: Path, line: bytes) -> None:
    """Append ``line`` under an exclusive lock; if the disk fails half-way, the file is cut
    back to where it was, so it never ends in half a line."""
    # A FIFO or a link planted where a result file goes is refused, not waited on or followed.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK
    fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(errno.EINVAL, f"{path} is not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX)
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)  # releases the lock
