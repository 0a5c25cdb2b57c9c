"""``python -m pytest_bfcl.compare --html`` on many changed entries with long answers (run with
``pytest benchmarks/test_compare_html.py -s``; not part of the test suite): 400 entries that
changed, with 2,000-character answers on both sides (the longest a baseline keeps), and with
70,000-character answers (an edited baseline). The whole process's wall time, from a folder
outside the repository, against the target: the page within :data:`TARGET_S`."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from pytest_bfcl.gate import baseline_data

TARGET_S = 15.0
ENTRIES = 400


def varied_answer(rng: random.Random, size: int) -> str:
    """Distinct numbers and punctuation: the matcher's worst case (few shared tokens)."""
    parts: list[str] = []
    length = 0
    while length < size:
        part = f"{rng.randint(0, 10**9)}, "
        parts.append(part)
        length += len(part)
    return "".join(parts)[:size]


def write_run(path: Path, label: str, valid: bool, size: int, seed: int) -> None:
    rng = random.Random(seed)
    ids = [f"simple_python_{n}" for n in range(ENTRIES)]
    meta = {"model": "m", "mode": "fc", "categories": ["simple_python"], "dataset": {},
            "run_id": label}  # fmt: skip
    data = baseline_data(dict.fromkeys(ids, valid), meta, {})
    answers = {i: varied_answer(rng, size) for i in ids}  # as an edited file holds them
    packed = zlib.compress(json.dumps(answers).encode(), 9, wbits=31)
    data["answers"] = {
        "encoding": "gzip+base64",
        "entries": len(answers),
        "left_out": 0,
        "answer_limit": size,
        "data": base64.b64encode(packed).decode("ascii"),
    }
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("size", [2000, 70_000])
def test_compare_html_is_bounded(tmp_path, size):
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    write_run(before, "before", True, size, 1)
    write_run(after, "after", False, size, 2)
    page = tmp_path / "compare.html"
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest_bfcl.compare", str(before), str(after), f"--html={page}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    wall = time.perf_counter() - started
    print(f"\ncompare --html, {ENTRIES} changed entries, {size:,}-character answers: {wall:.2f} s")
    assert result.returncode == 1, result.stderr
    assert page.stat().st_size > 0
    assert wall < TARGET_S
