"""Memory and disk of a whole flooding run: 112 multi-turn entries whose model answers every
step with 37 calls of 199,000 characters (7.4 MB, under the 8 MiB answer cap). Each entry ends
at its budget (--bfcl-max-entry-bytes, 16 MiB) after 3 answers; before its results and cache
records were cut to an excerpt the run peaked at 7.4 GB and wrote 3.1 GB of results (and
gigabytes of cache). Whole process, default options, run from a folder outside the project;
peak resident memory from the kernel (ru_maxrss of the finished child)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

from pytest_bfcl.dataset.fetch import ensure_pinned_data
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.testing.fake_openai import FakeOpenAI

PEAK_MB = 1024
WRITTEN_MB = 100


def test_a_112_entry_flood_stays_within_memory_and_disk_bounds(tmp_path):
    dataset = Dataset(ensure_pinned_data())
    selection = "multi_turn_base_0 or multi_turn_base_1"  # 0, 1, 10-19, 100-199: 112 entries
    with FakeOpenAI(dataset, ["multi_turn_base"]) as fake:
        fake.chat_fault = "flood"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=no",
             "--bfcl-model=test-model", f"--bfcl-base-url={fake.base_url}",
             "--bfcl-category=multi_turn_base", f"--bfcl-results-dir={tmp_path / 'results'}",
             f"--bfcl-cache-dir={tmp_path / 'cache'}", "-k", selection,
             "--rootdir", str(tmp_path), str(tmp_path)],
            capture_output=True, text=True, timeout=1200, cwd=tmp_path,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        requests = fake.total_requests()
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    written_mb = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) / 2**20
    print(f"\n112 flooding entries: {elapsed:.1f} s, {requests} requests, peak {peak_mb:.0f} MB, "
          f"{written_mb:.1f} MB written")  # fmt: skip
    assert "112 failed" in done.stdout, done.stdout[-2000:]
    assert requests == 336  # 3 answers each, then the budget ends the conversation
    assert peak_mb < PEAK_MB, f"peak {peak_mb:.0f} MB"
    assert written_mb < WRITTEN_MB, f"{written_mb:.1f} MB written"
