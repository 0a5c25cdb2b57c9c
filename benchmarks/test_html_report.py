"""HTML report benchmarks (run with ``pytest benchmarks/test_html_report.py``; not part of the
test suite).

- Rendering 10,000 realistic records (every scoring category at its size, then
  format-sensitivity copies): time, and the file's size against the 40 MB target.
- The same with heavy answers (long varied outputs and multi-turn conversations near their
  size bounds), where compression has less to work with.
- Opening the 10,000-record file in headless Chromium: first contentful paint and the time
  until the entry list is built, against the 2 s target (skipped without a browser).
"""

from __future__ import annotations

import importlib.util
import random
import statistics
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.report.html.facts import CONVERSATION_LIMIT, FIELD_LIMIT, EntryRecord
from pytest_bfcl.report.html.page import render_html

# The record builder and the browser helpers live with the tests; loaded by path, since the
# tests folder is not a package.
_spec = importlib.util.spec_from_file_location(
    "html_report_tests",
    Path(__file__).resolve().parents[1] / "tests" / "report" / "test_html_report.py",
)
assert _spec is not None and _spec.loader is not None
report_tests: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_tests)

SIZE_TARGET = 40_000_000
PAINT_TARGET_MS = 2000
_VOCABULARY = (
    "the model called search with keywords and fetched a page about quarterly revenue "
    "growth in the file system folder workspace report tickets flights vehicles stocks "
    "messages posts temperature engine door lock balance order cancel book"
)
_WORDS = _VOCABULARY.split()


def _varied_text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS) + (str(rng.randint(0, 99999)) if rng.random() < 0.2 else "")
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def _heavy(records: list[EntryRecord], seed: int = 11) -> list[EntryRecord]:
    """The records with long, varied outputs, and multi-step conversations near their bound."""
    rng = random.Random(seed)
    heavy = []
    for record in records:
        update: dict[str, Any] = {"output": _varied_text(rng, rng.randint(500, FIELD_LIMIT))}
        if record.conversation:
            steps = {
                f"step_{i}": [
                    {"role": "assistant", "content": _varied_text(rng, 600)},
                    {"role": "tool", "content": _varied_text(rng, 1400)},
                ]
                for i in range(CONVERSATION_LIMIT // 2000 // 3)
            }
            update["conversation"] = [dict(steps) for _ in range(3)]
        heavy.append(record.model_copy(update=update))
    return heavy


def _render(records: list[EntryRecord]) -> str:
    scores, gate = report_tests.scores_and_gate(records)
    return render_html(records, report_tests.FUNCTIONS, scores, gate, report_tests.METADATA)


@pytest.fixture(scope="module")
def records() -> list[EntryRecord]:
    return report_tests.make_records(10_000)


def test_render_ten_thousand_records(benchmark, records):
    page = benchmark.pedantic(_render, args=(records,), rounds=3, iterations=1)
    size = len(page.encode("utf-8"))
    benchmark.extra_info["bytes"] = size
    print(f"\n10,000 records: {size / 1e6:.2f} MB")
    assert size < SIZE_TARGET


def test_render_ten_thousand_heavy_records(benchmark, records):
    heavy = _heavy(records)
    page = benchmark.pedantic(_render, args=(heavy,), rounds=1, iterations=1)
    size = len(page.encode("utf-8"))
    benchmark.extra_info["bytes"] = size
    print(f"\n10,000 heavy records: {size / 1e6:.2f} MB")
    assert size < SIZE_TARGET


def _paint_times(driver: Any, path: Path) -> tuple[float, float, float]:
    """(first contentful paint, entry list built, details read in the background), in ms
    from navigation start."""
    from selenium.webdriver.support.ui import WebDriverWait

    report_tests.open_report(driver, path, timeout=60)
    paint = driver.execute_script(
        "const p = performance.getEntriesByName('first-contentful-paint')[0];"
        "return p ? p.startTime : null"
    )
    ready = driver.execute_script("return window.bfclReadyMs")
    details = WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return window.bfclDetailsMs")
    )
    return float(paint), float(ready), float(details)


@pytest.mark.skipif(report_tests._browser_missing() is not None, reason="no headless browser")
@pytest.mark.parametrize("kind", ["realistic", "heavy"])
def test_first_paint_ten_thousand_records(tmp_path, records, kind):
    path = tmp_path / "bfcl.html"
    path.write_text(_render(records if kind == "realistic" else _heavy(records)), "utf-8")
    driver = report_tests.start_browser(tmp_path / "profile")
    try:
        times = [_paint_times(driver, path) for _ in range(5)]
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()
    paint = statistics.median(t[0] for t in times)
    ready = statistics.median(t[1] for t in times)
    details = statistics.median(t[2] for t in times)
    size = path.stat().st_size / 1e6
    print(
        f"\n{kind}: {size:.2f} MB, first contentful paint {paint:.0f} ms, "
        f"entries listed {ready:.0f} ms, all details read {details:.0f} ms (median of 5)"
    )
    assert errors == []
    assert paint < PAINT_TARGET_MS and ready < PAINT_TARGET_MS
