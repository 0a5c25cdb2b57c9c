"""Memory and disk of whole flooding runs, each under 1 GB peak and 100 MB written:

- 112 multi-turn entries whose model answers every step with 37 calls of 199,000 characters
  (7.4 MB, under the 8 MiB answer cap). Each entry ends at its budget (--bfcl-max-entry-bytes,
  16 MiB) after 3 answers; before its results and cache records were cut to an excerpt the run
  peaked at 7.4 GB and wrote 3.1 GB of results (and gigabytes of cache).
- The same 112 entries answered as the ground truth says, each step with 3 MB of
  ``reasoning_content`` that the history echoes back as returned: many conversations stay
  under their budget; kept whole, they peaked at 1.95 GB and wrote 590 MB of results and
  589 MB of cache.
- Web-search entries whose model calls the search tool 1,000 times a step, each search
  answered with one hit of 4.9 MB: before a step's results were counted against the budget as
  they came, 6 entries held 8.66 GB (500 searches each) and the run was killed.

Whole process, default options, run from a folder outside the project; peak resident memory
from the kernel (the finished child's ru_maxrss, from wait4)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from pytest_bfcl.dataset.fetch import ensure_pinned_data
from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.testing.fake_openai import FakeOpenAI
from pytest_bfcl.testing.fake_web import FakeWeb

PEAK_MB = 1024
WRITTEN_MB = 100
# multi_turn_base 0, 1, 10-19 and 100-199: 112 entries
MULTI_TURN_112 = "multi_turn_base_0 or multi_turn_base_1"


def measured_run(args: list[str], tmp_path: Path) -> tuple[str, float, float, float]:
    """A whole pytest process on ``args``: its output, seconds, peak MB and MB written."""
    log = tmp_path / "out.txt"
    started = time.perf_counter()
    with log.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=no",
             f"--bfcl-results-dir={tmp_path / 'results'}",
             f"--bfcl-cache-dir={tmp_path / 'cache'}", *args,
             "--rootdir", str(tmp_path), str(tmp_path)],
            stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,
        )  # fmt: skip
        _, _, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    written = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file() and p != log)
    return log.read_text(), elapsed, usage.ru_maxrss / 1024, written / 2**20


def test_a_112_entry_flood_stays_within_memory_and_disk_bounds(tmp_path):
    dataset = open_dataset(ensure_pinned_data())
    with FakeOpenAI(dataset, ["multi_turn_base"]) as fake:
        fake.chat_fault = "flood"
        out, elapsed, peak_mb, written_mb = measured_run(
            ["--bfcl-model=test-model", f"--bfcl-base-url={fake.base_url}",
             "--bfcl-category=multi_turn_base", "-k", MULTI_TURN_112],
            tmp_path,
        )  # fmt: skip
        requests = fake.total_requests()
    print(f"\n112 flooding entries: {elapsed:.1f} s, {requests} requests, peak {peak_mb:.0f} MB, "
          f"{written_mb:.1f} MB written")  # fmt: skip
    assert "112 failed" in out, out[-2000:]
    assert requests == 336  # 3 answers each, then the budget ends the conversation
    assert peak_mb < PEAK_MB, f"peak {peak_mb:.0f} MB"
    assert written_mb < WRITTEN_MB, f"{written_mb:.1f} MB written"


def test_112_entries_echoing_3_mb_of_reasoning_a_step_stay_within_bounds(tmp_path):
    dataset = open_dataset(ensure_pinned_data())
    with FakeOpenAI(dataset, ["multi_turn_base"]) as fake:
        fake.chat_fault = "reasoning_flood"
        fake.reasoning_chars = 3_000_000
        out, elapsed, peak_mb, written_mb = measured_run(
            ["--bfcl-model=test-model", f"--bfcl-base-url={fake.base_url}",
             "--bfcl-category=multi_turn_base", "-k", MULTI_TURN_112],
            tmp_path,
        )  # fmt: skip
        requests = fake.total_requests()
    print(f"\n112 entries echoing 3 MB of reasoning a step: {elapsed:.1f} s, {requests} "
          f"requests, peak {peak_mb:.0f} MB, {written_mb:.1f} MB written")  # fmt: skip
    summary = out.strip().splitlines()[-1]
    assert "passed" in summary and "error" not in summary, out[-2000:]
    assert requests > 112 * 3
    assert peak_mb < PEAK_MB, f"peak {peak_mb:.0f} MB"
    assert written_mb < WRITTEN_MB, f"{written_mb:.1f} MB written"


def test_a_web_search_flood_stays_within_bounds(tmp_path):
    dataset = open_dataset(ensure_pinned_data())
    entries = int(os.environ.get("BFCL_FLOOD_WEB_ENTRIES", "20"))
    with FakeOpenAI(dataset, ["web_search_base"]) as fake, FakeWeb(hits=1) as web:
        fake.chat_fault, fake.searches = "search_flood", 1000
        web.snippet_chars = 4_900_000
        out, elapsed, peak_mb, written_mb = measured_run(
            ["--bfcl-model=test-model", f"--bfcl-base-url={fake.base_url}",
             "--bfcl-category=web_search_base", "--bfcl-web-provider=serpapi",
             f"--bfcl-web-search-url={web.search_url}", "--bfcl-web-allow-private",
             f"--bfcl-sample={entries}"],
            tmp_path,
        )  # fmt: skip
        searches = web.requests["search"]
    print(f"\n{entries} web-search entries flooding 1,000 searches of 4.9 MB a step: "
          f"{elapsed:.1f} s, {searches} searches, peak {peak_mb:.0f} MB, "
          f"{written_mb:.1f} MB written")  # fmt: skip
    assert f"{entries} failed" in out, out[-2000:]
    assert searches <= 1 + entries * 4  # the budget holds 3 hits, the 4th ends the entry
    assert peak_mb < PEAK_MB, f"peak {peak_mb:.0f} MB"
    assert written_mb < WRITTEN_MB, f"{written_mb:.1f} MB written"
