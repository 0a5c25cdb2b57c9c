"""The HTML report (``--bfcl-html``): a self-contained page, hostile output kept as text, every
record in its data; and, in a real headless Chromium when one is installed, the entry browser
(filters and their counts, the id search, a multi-turn entry's state difference, no console
errors).

Screenshots for the docs: ``BFCL_HTML_SCREENSHOTS=docs/images pytest tests/report/test_html_report.py``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.dataset.categories import (
    ALL_SCORING,
    DATASET_SIZES,
    FORMAT_SENSITIVITY,
    MEMORY,
    MULTI_TURN,
    WEB_SEARCH,
)
from pytest_bfcl.gate.decision import GateResult, GateSettings, evaluate_gate
from pytest_bfcl.report.html.entries import GZIP_ABOVE, HtmlEntries
from pytest_bfcl.report.html.facts import EntryRecord, bounded, functions_key
from pytest_bfcl.report.html.page import (
    collect,
    data_elements,
    read_data_element,
    render_html,
    write_html,
)
from pytest_bfcl.report.html.tables import gate_verdict
from pytest_bfcl.scores.board import ScoreBoard, Scores

HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>&amp;\u2028\ud800"
STATE_DIFF = "    GorillaFileSystem.root:"
STATE_DIFF_LINE = "      missing in the model: /workspace/report.txt = 'quarterly numbers'"

# -- a realistic run, built without the dataset -------------------------------------------------

_DOCS = {
    "single": [
        {
            "name": "calculate_triangle_area",
            "description": "Calculate the area of a triangle given its base and height.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "base": {"type": "integer", "description": "The base of the triangle."},
                    "height": {"type": "integer", "description": "The height of the triangle."},
                    "unit": {"type": "string", "enum": ["cm", "m"], "default": "cm"},
                },
                "required": ["base", "height"],
            },
        }
    ],
    "files": [
        {
            "name": f"GorillaFileSystem.{name}",
            "description": f"{name}: a file-system operation.",
            "parameters": {
                "type": "dict",
                "properties": {"folder": {"type": "string", "description": "A folder name."}},
                "required": ["folder"],
            },
        }
        for name in ("cd", "ls", "mkdir", "touch", "echo", "cat", "grep", "mv", "cp", "rm")
    ],
    "memory": [
        {"name": "core_memory_add", "description": "Add a key-value pair to core memory.",
         "parameters": {"type": "dict", "properties": {"key": {"type": "string"},
                                                        "value": {"type": "string"}}}},
        {"name": "archival_memory_key_search", "description": "Search archival memory.",
         "parameters": {"type": "dict", "properties": {"query": {"type": "string"}}}},
    ],
    "web": [
        {"name": "duckduckgo_search", "description": "Search the web.",
         "parameters": {"type": "dict", "properties": {"keywords": {"type": "string"}}}},
        {"name": "fetch_url_content", "description": "Fetch a page.",
         "parameters": {"type": "dict", "properties": {"url": {"type": "string"}}}},
    ],
}  # fmt: skip
FUNCTIONS = {functions_key(docs): docs for docs in _DOCS.values()}
KEYS = {name: functions_key(docs) for name, docs in _DOCS.items()}


def _outcome(rng: random.Random, trouble: float) -> tuple[str, bool | None, bool | None]:
    """(outcome, valid, baseline_valid) drawn with a run's usual mix; ``trouble``: the share
    of errored and skipped entries."""
    roll = rng.random()
    if roll < trouble * 0.6:
        return "error", None, rng.random() < 0.8
    if roll < trouble:
        return "skipped", None, None
    valid = rng.random() < 0.8
    # more entries regress than improve: the run is worse than its baseline
    baseline = valid if rng.random() < (0.96 if valid else 0.6) else not valid
    if valid:
        return ("xpassed" if baseline is False else "passed"), True, baseline
    return ("xfailed" if baseline is False else "failed"), False, baseline


def _single_turn(entry_id: str, category: str, rng: random.Random) -> dict[str, Any]:
    base = rng.randint(1, 40)
    output = json.dumps([{"calculate_triangle_area": json.dumps({"base": base, "height": 5})}])
    return {
        "question": f"user: Find the area of a triangle with a base of 10 units and height of 5 "
        f"units. ({entry_id})",
        "functions_key": KEYS["single"],
        "output": output,
        "decoded": f"[{{'calculate_triangle_area': {{'base': {base}, 'height': 5}}}}]",
        "expected": "[{'calculate_triangle_area': {'base': [10], 'height': [5], 'unit': ['', 'cm']}}]",
        "latency": round(rng.uniform(0.2, 3.0), 3),
        "input_tokens": rng.randint(200, 900),
        "output_tokens": rng.randint(10, 80),
    }


def _multi_turn(entry_id: str, rng: random.Random) -> dict[str, Any]:
    turns = []
    for turn in range(3):
        steps: dict[str, Any] = {
            "begin_of_turn_query": [
                {"role": "user", "content": f"Turn {turn}: move into workspace and list it."}
            ]
        }
        for step in range(3):
            call = "cd(folder='workspace')" if step < 2 else None
            messages: list[dict[str, Any]] = [
                {"role": "handler_log", "content": f"step {step}: querying the model"},
                {"role": "assistant", "content": call or "Done: the folder holds report.txt.",
                 **({"decoded": bounded([call])} if call else {})},
            ]  # fmt: skip
            if call:
                messages.append({"role": "tool", "content": "{'current_working_directory': "
                                 "'workspace'}"})  # fmt: skip
            steps[f"step_{step}"] = messages
        turns.append(steps)
    return {
        "question": "-- turn 1 --\nuser: move into workspace\n-- turn 2 --\nuser: list it",
        "functions_key": KEYS["files"],
        "output": json.dumps([[["cd(folder='workspace')"], ["ls()"]]] * 3),
        "decoded": "[[['cd(folder=\\'workspace\\')']]]",
        "expected": "[['cd(folder=\\'workspace\\')', 'touch(file_name=\\'report.txt\\')']]",
        "conversation": turns,
        "latency": round(rng.uniform(2, 20), 3),
    }


def _multi_turn_failure_detail() -> list[str]:
    return [
        "  turn 1: the model made 1 call(s)",
        "    cd(folder='workspace') -> {'current_working_directory': 'workspace'}",
        "  turn 1: the ground truth makes 2 call(s)",
        "    cd(folder='workspace')",
        "    touch(file_name='report.txt')",
        "  state differences (model vs ground truth):",
        STATE_DIFF,
        STATE_DIFF_LINE,
    ]


def _agentic(entry_id: str, category: str) -> dict[str, Any]:
    memory = category in MEMORY
    tool, args = (
        ("core_memory_add", "key='favourite_course', value='Linear algebra'")
        if memory
        else ("duckduckgo_search", "keywords='tallest building in Oslo'")
    )
    steps = {
        "begin_of_turn_query": [{"role": "user", "content": "What is my favourite course?"}],
        "step_0": [
            {"role": "assistant", "content": f"{tool}({args})", "decoded": [f"{tool}({args})"]},
            {"role": "tool", "content": "{'status': 'ok', 'results': ['Linear algebra']}"},
        ],
        "step_1": [{"role": "assistant", "content": "{'answer': 'Linear algebra', "
                    "'context': 'stored in core memory'}"}],
    }  # fmt: skip
    return {
        "question": "user: What is my favourite course?",
        "functions_key": KEYS["memory" if memory else "web"],
        "output": "{'answer': 'Linear algebra', 'context': 'stored in core memory'}",
        "expected": "['Linear algebra']",
        "conversation": [steps],
    }


def _entry_ids(count: int, per_category: int | None) -> Iterator[tuple[str, str]]:
    """(id, category): every scoring category at its dataset size (or ``per_category``), then
    format-sensitivity copies up to ``count``."""
    produced = 0
    for category in ALL_SCORING:
        for index in range(min(DATASET_SIZES[category], per_category or 10**9)):
            if produced == count:
                return
            produced += 1
            yield f"{category}_{index}", category
    configs = ("python-plain", "json-markdown", "xml-noquote", "python-fence")
    index = 0
    while produced < count:
        yield (
            f"format_sensitivity_{index}:{configs[index % 4]}:simple_python_{index}",
            (FORMAT_SENSITIVITY),
        )
        index += 1
        produced += 1


def make_records(
    count: int, per_category: int | None = None, seed: int = 7, trouble: float = 0.05
) -> list[EntryRecord]:
    """``count`` records of a realistic run: single-turn passes and failures, multi-turn
    conversations with a state difference, agentic memory / search steps, errored and skipped
    entries, regressions and improvements against a baseline, and one hostile answer."""
    rng = random.Random(seed)
    records = []
    for entry_id, category in _entry_ids(count, per_category):
        outcome, valid, baseline = _outcome(rng, trouble)
        if category in MULTI_TURN:
            fields = _multi_turn(entry_id, rng)
        elif category in MEMORY or category in WEB_SEARCH:
            fields = _agentic(entry_id, category)
        else:
            fields = _single_turn(entry_id, category, rng)
        if outcome in ("error", "skipped"):
            fields = {"question": fields["question"], "functions_key": fields["functions_key"]}
            reason = "server error 503 after 4 retries" if outcome == "error" else "web is off"
            fields["reasons"] = [reason]
        elif valid is False:
            if category in MULTI_TURN:
                fields["reasons"] = ["Model instance for GorillaFileSystem does not match the "
                                     "state with ground truth instance."]  # fmt: skip
                fields["error_type"] = "multi_turn:instance_state_mismatch"
                fields["detail"] = _multi_turn_failure_detail()
            else:
                fields["reasons"] = [
                    "Invalid value for parameter 'base': 12. Expected one of [10]."
                ]
                fields["error_type"] = "value_error:others"
        records.append(
            EntryRecord(
                id=entry_id,
                category=category,
                outcome=outcome,  # type: ignore[arg-type]
                valid=valid,
                baseline_valid=baseline,
                regression=baseline is True and valid is False,
                improvement=baseline is False and valid is True,
                **fields,
            )
        )
    records[0] = records[0].model_copy(
        update={"output": HOSTILE, "reasoning": HOSTILE, "outcome": "failed", "valid": False,
                "regression": True, "baseline_valid": True, "error_type": "value_error:others"}
    )  # fmt: skip
    return records


def scores_and_gate(records: list[EntryRecord]) -> tuple[Scores, GateResult | None]:
    board = ScoreBoard()
    baseline: dict[str, bool] = {}
    for r in records:
        if r.valid is not None:
            board.add_verdict(r.id, r.category, r.valid)
        elif r.outcome == "skipped":
            board.add_skip(r.category, "web is off")
        else:
            board.add_error(r.category)
        if r.baseline_valid is not None and r.valid is not None:
            baseline[r.id] = r.baseline_valid
    scores = board.scores()
    gate = evaluate_gate(scores, board.verdicts, baseline, GateSettings())
    return scores, gate


METADATA = {
    "model": "acme/fc-7b-step4000",
    "mode": "fc",
    "dataset": {"version": "2026.3.23", "sha256": "0" * 64},
    "plugin_version": "0.1.0",
    "finished_at": "2026-11-22 03:10 UTC",
}


def render(records: list[EntryRecord], gated: bool = True) -> str:
    scores, gate = scores_and_gate(records)
    return render_html(records, FUNCTIONS, scores, gate if gated else None, METADATA)


@pytest.fixture(scope="module")
def records() -> list[EntryRecord]:
    return make_records(3000, per_category=120)


@pytest.fixture(scope="module")
def page(records: list[EntryRecord]) -> str:
    return render(records)


# -- without a browser --------------------------------------------------------------------------


def test_the_page_loads_nothing_from_outside(page: str):
    assert not re.search(r"<link\b", page, re.I)
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.I)
    assert "@import" not in page and "url(" not in page.split('id="bfcl-data"')[0]
    assert "default-src 'none'" in page  # and the browser is told to refuse any load


@pytest.fixture(scope="module")
def small_page(records: list[EntryRecord]) -> str:
    """A page small enough that its data is plain JSON (larger ones are compressed)."""
    page = render(records[:200])
    assert 'data-encoding="gzip"' not in page
    return page


def test_hostile_output_cannot_break_out_of_the_data(small_page: str, page: str):
    for text in (small_page, page):
        # exactly the page's own three script elements, each ending once
        assert len(re.findall(r"<script\b", text)) == 3
        data_part = text[text.index('id="bfcl-data"') :]
        assert data_part.count("</script>") == 3  # the two data elements' ends and the code's
        assert "<img" not in text and "\u2028" not in text
        text.encode("utf-8")  # no lone surrogate left in the file
    data_part = small_page[small_page.index('id="bfcl-details"') :]
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in data_part  # escaped, kept


def test_hostile_output_round_trips_as_text(records: list[EntryRecord], small_page: str):
    first = read_data_element(small_page)["records"][0]
    assert first["output"] == HOSTILE and first["reasoning"] == HOSTILE
    assert first["id"] == records[0].id


def test_every_record_is_in_the_data(records: list[EntryRecord], page: str):
    data = read_data_element(page)
    assert [r["id"] for r in data["records"]] == [r.id for r in records]
    back = [EntryRecord.model_validate(r) for r in data["records"]]
    assert back == records  # the lone surrogate too: escaped, not replaced
    assert set(data["functions"]) == set(FUNCTIONS)


def test_large_data_is_compressed_and_small_data_is_plain(records: list[EntryRecord]):
    few = records[:3]
    for gzip_above, compressed in ((GZIP_ABOVE, False), (0, True)):
        entries = HtmlEntries(gzip_above)
        for record in few:
            entries.add_record(record)
        page = "".join(data_elements(entries, {}))
        assert page.count('data-encoding="gzip"') == (2 if compressed else 0)
        back = read_data_element(page)["records"]
        assert [r["id"] for r in back] == [r.id for r in few]
        assert back[0]["output"] == HOSTILE and back[1]["question"] == few[1].question


def test_header_and_scores(page: str, records: list[EntryRecord]):
    assert "acme/fc-7b-step4000" in page and "2026.3.23" in page and "2026-11-22" in page
    assert re.search(r'id="gate-verdict"[^>]*>gate: FAILED<', page)
    assert "<svg" in page  # the chart
    for category in {r.category for r in records}:
        assert f'data-category="{category}"' in page
    assert "p-value" in page and "regressed" in page


def test_a_run_without_gate_or_categories_labels_them(records: list[EntryRecord]):
    single = [r for r in records if r.category == "simple_python"]
    page = render(single, gated=False)
    assert re.search(r'id="gate-verdict"[^>]*>gate: no gate<', page)
    assert "not run" in page and "overall: <b>not computed (" in page
    assert "p-value" not in page


def empty_page() -> str:
    return render_html([], {}, ScoreBoard().scores(), None, {"model": "m"})


def test_an_empty_run_still_renders():
    page = empty_page()
    assert read_data_element(page)["records"] == []
    assert "not run" in page


def test_gate_verdict_words():
    settings = GateSettings()
    assert gate_verdict(GateResult(settings=settings, comparisons=[]))[0] == "passed"
    off = settings.model_copy(update={"mode": "off"})
    assert gate_verdict(GateResult(settings=off, comparisons=[]))[0] == "off (not enforced)"
    incomplete = GateResult(settings=settings, comparisons=[], incomplete=["simple: 3 missing"])
    assert gate_verdict(incomplete)[0] == "incomplete"
    allowed = incomplete.model_copy(update={"allow_incomplete": True})
    assert gate_verdict(allowed)[0] == "passed (incomplete)"
    failed = GateResult(settings=settings, comparisons=[], threshold_failures=["overall: low"])
    assert gate_verdict(failed)[0] == "FAILED"


def test_write_is_atomic_and_replaces(tmp_path: Path, records: list[EntryRecord]):
    scores, gate = scores_and_gate(records[:50])
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    target.write_text("old")
    write_html(target, collect(records[:50], FUNCTIONS), scores, gate, METADATA)
    assert target.read_text("utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]  # no temp file left


def test_ten_thousand_records_stay_under_40_mb():
    records = make_records(10_000)
    page = render(records)
    assert len(page.encode("utf-8")) < 40_000_000
    assert len(read_data_element(page)["records"]) == 10_000


# -- in a real browser --------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        return "chromium and chromedriver are not installed"
    return None


def start_browser(user_data_dir: Path, width: int = 1400, height: int = 1000) -> Any:
    """Headless Chromium through the system's chromedriver (never a downloaded one)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={user_data_dir}", f"--window-size={width},{height}",
    ):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def open_report(driver: Any, path: Path, timeout: float = 30) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(path.as_uri())
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'")
    )


browser_only = pytest.mark.skipif(_browser_missing() is not None, reason=str(_browser_missing()))


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = start_browser(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory, page: str) -> Path:
    path = tmp_path_factory.mktemp("report") / "bfcl.html"
    path.write_text(page, "utf-8")
    return path


@pytest.fixture
def opened(driver: Any, report_file: Path) -> Any:
    open_report(driver, report_file)
    driver.get_log("browser")  # start each test with an empty console
    return driver


def _click(driver: Any, css: str) -> None:
    driver.find_element("css selector", css).click()


def _shown_ids(driver: Any) -> list[str]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#rows > li')].map(li => li.dataset.id)"
    )


def _filter_count(driver: Any, name: str) -> int:
    return int(driver.find_element("css selector", f'[data-filter="{name}"] .count').text)


def _open_entry(driver: Any, entry_id: str) -> Any:
    """Click an entry's row and wait for its details (read asynchronously)."""
    from selenium.webdriver.support.ui import WebDriverWait

    _click(driver, f'li[data-id="{entry_id}"] .row-head')
    css = f'li[data-id="{entry_id}"] .detail:not(.loading)'
    return WebDriverWait(driver, 10).until(lambda d: d.find_element("css selector", css))


def _errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


@browser_only
def test_filters_change_rows_and_counts(opened: Any, records: list[EntryRecord]):
    _click(opened, 'button.cat[data-category="multi_turn_base"]')
    in_category = [r for r in records if r.category == "multi_turn_base"]
    expected = {
        "all": in_category,
        "failing": [r for r in in_category if r.valid is False or r.outcome == "failed"],
        "regressed": [r for r in in_category if r.regression],
        "improved": [r for r in in_category if r.improvement],
        "errored": [r for r in in_category if r.outcome == "error"],
        "skipped": [r for r in in_category if r.outcome == "skipped"],
    }
    for name, wanted in expected.items():
        assert _filter_count(opened, name) == len(wanted), name
    for name in ("failing", "errored", "all"):
        _click(opened, f'[data-filter="{name}"]')
        shown = _shown_ids(opened)
        assert shown == [r.id for r in expected[name]][:50], name
        status = opened.find_element("css selector", "#list-status").text
        assert status.startswith(f"{len(expected[name])} "), status
    assert _errors(opened) == []


@browser_only
def test_the_pager_shows_the_next_page(opened: Any, records: list[EntryRecord]):
    _click(opened, '[data-filter="all"]')
    _click(opened, 'button.cat[data-category="simple_python"]')
    first = _shown_ids(opened)
    opened.find_element("xpath", "//button[contains(., 'next')]").click()
    ids = [r.id for r in records if r.category == "simple_python"]
    assert first == ids[:50] and _shown_ids(opened) == ids[50:100]
    assert len(opened.find_elements("css selector", "#rows > li")) == 50  # never all rows


@browser_only
def test_search_by_id_finds_an_entry(opened: Any):
    from selenium.webdriver.support.ui import WebDriverWait

    _click(opened, 'button.cat[data-category="*"]')
    _click(opened, '[data-filter="all"]')
    opened.find_element("css selector", "#search").send_keys("LIVE_MULTIPLE_10")
    WebDriverWait(opened, 5).until(lambda d: "live_multiple_10" in _shown_ids(d))
    shown = _shown_ids(opened)
    assert shown and all("live_multiple_10" in i for i in shown)
    assert _filter_count(opened, "all") == len(shown)


@browser_only
def test_a_multi_turn_entry_shows_its_state_difference(opened: Any, records: list[EntryRecord]):
    failing = next(r for r in records if r.category == "multi_turn_base" and r.detail)
    _click(opened, f'button.cat[data-category="{failing.category}"]')
    _click(opened, '[data-filter="failing"]')
    detail = _open_entry(opened, failing.id)
    text = detail.text
    assert STATE_DIFF_LINE.strip() in text
    assert "turn 1 (the checker's failing turn)" in text
    assert "calls: cd(folder='workspace')" in text and "current_working_directory" in text
    functions = detail.find_element("css selector", "details.functions")
    assert not functions.get_attribute("open")  # collapsed until asked
    functions.find_element("css selector", "summary").click()
    from selenium.webdriver.support.ui import WebDriverWait

    # the docs are added on the "toggle" event, which fires after the click has returned
    WebDriverWait(opened, 5).until(lambda _: "GorillaFileSystem.mkdir" in functions.text)
    assert _errors(opened) == []


@browser_only
def test_an_agentic_entry_shows_steps_and_final_answer(opened: Any, records: list[EntryRecord]):
    entry = next(r for r in records if r.category == "memory_kv" and r.conversation)
    opened.execute_script(f"location.hash = 'entry={entry.id}'; location.reload()")
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(opened, 30).until(
        lambda d: d.find_elements("css selector", f'li[data-id="{entry.id}"] .detail:not(.loading)')
    )
    text = opened.find_element("css selector", f'li[data-id="{entry.id}"] .detail').text
    assert "core_memory_add(key='favourite_course'" in text
    assert "FINAL ANSWER" in text.upper() and "Linear algebra" in text
    opened.execute_script("location.hash = ''")


@browser_only
def test_hostile_output_is_shown_as_text(opened: Any, records: list[EntryRecord]):
    hostile = records[0]
    _click(opened, f'button.cat[data-category="{hostile.category}"]')
    _click(opened, '[data-filter="regressed"]')
    detail = _open_entry(opened, hostile.id)
    # (WebDriver cannot carry the lone surrogate back, so it is replaced before reading)
    text = opened.execute_script(
        "return arguments[0].textContent.replace(/[\\uD800-\\uDFFF]/g, '\\uFFFD')", detail
    )
    assert HOSTILE.replace("\ud800", "\ufffd") in text
    assert opened.execute_script("return document.scripts.length") == 3
    assert opened.execute_script("return document.images.length") == 0
    assert _errors(opened) == []


@browser_only
def test_an_empty_run_opens(driver: Any, tmp_path: Path):
    path = tmp_path / "empty.html"
    path.write_text(empty_page(), "utf-8")
    open_report(driver, path)
    assert driver.find_element("css selector", "#list-status").text.startswith("0 entries")
    assert _errors(driver) == []


@browser_only
def test_compressed_data_opens(driver: Any, tmp_path: Path):
    records = make_records(10_000)
    path = tmp_path / "big.html"
    path.write_text(render(records), "utf-8")
    assert 'data-encoding="gzip"' in path.read_text("utf-8")
    open_report(driver, path)
    driver.get_log("browser")
    _click(driver, 'button.cat[data-category="*"]')
    _click(driver, '[data-filter="all"]')
    assert _filter_count(driver, "all") == 10_000
    assert _errors(driver) == []


@pytest.mark.skipif(
    not os.environ.get("BFCL_HTML_SCREENSHOTS") or _browser_missing() is not None,
    reason="screenshots only when BFCL_HTML_SCREENSHOTS names a folder and a browser exists",
)
def test_screenshots(tmp_path: Path):
    folder = Path(os.environ["BFCL_HTML_SCREENSHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    # a complete nightly run of every scoring category
    records = make_records(5106, trouble=0.0)
    path = tmp_path / "bfcl.html"
    path.write_text(render(records), "utf-8")
    driver = start_browser(tmp_path / "profile", 1280, 900)
    try:
        open_report(driver, path)
        # the header and the whole score table in one view
        bottom = driver.execute_script(
            "return document.querySelector('#scores').getBoundingClientRect().bottom"
        )
        chrome = driver.execute_script("return window.outerHeight - window.innerHeight")
        driver.set_window_size(1280, int(bottom) + int(chrome) + 16)
        driver.save_screenshot(str(folder / "html-report-scores.png"))
        driver.set_window_size(1280, 900)
        _click(driver, 'button.cat[data-category="live_multiple"]')
        _click(driver, '[data-filter="failing"]')
        driver.execute_script("document.getElementById('entries').scrollIntoView()")
        driver.save_screenshot(str(folder / "html-report-failing.png"))
        failing = next(r for r in records if r.category == "multi_turn_base" and r.detail)
        _click(driver, f'button.cat[data-category="{failing.category}"]')
        _open_entry(driver, failing.id)
        driver.set_window_size(1280, 2400)
        driver.find_element("css selector", f'li[data-id="{failing.id}"]').screenshot(
            str(folder / "html-report-multi-turn.png")
        )
    finally:
        driver.quit()
    for name in ("scores", "failing", "multi-turn"):
        assert (folder / f"html-report-{name}.png").stat().st_size < 400_000


@browser_only
def test_a_deep_link_shows_that_one_entry_and_scrolls_to_it(driver: Any, report_file: Path):
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(report_file.as_uri() + "#entry=simple_python_1")
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'")
    )
    assert _shown_ids(driver) == ["simple_python_1"]  # not simple_python_10 ... 19 too
    WebDriverWait(driver, 10).until(
        lambda d: d.find_element(
            "css selector", 'li[data-id="simple_python_1"] .detail:not(.loading)'
        )
    )
    top = driver.execute_script(
        "const r = document.querySelector('li[data-id=\"simple_python_1\"]')"
        ".getBoundingClientRect(); return [r.top, window.innerHeight, window.scrollY]"
    )
    assert 0 <= top[0] < top[1] and top[2] > 0  # scrolled down to it, in view
    driver.execute_script("location.hash = '#entry=live_multiple_10'")
    WebDriverWait(driver, 5).until(lambda d: _shown_ids(d) == ["live_multiple_10"])
    _click(driver, '[data-filter="all"]')  # browsing again leaves the linked entry
    assert len(_shown_ids(driver)) > 1
    assert _errors(driver) == []


def test_a_final_text_answer_is_not_logged_as_a_decode_failure(pytester, data_source):
    """In fc mode a conversation's last step is the model's answer in text: the end of its
    turn, which the report shows as such (the oracle answers memory questions so)."""
    html = pytester.path / "r.html"
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=memory_kv",
                                "--bfcl-sample=2", f"--bfcl-html={html}",
                                f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider")  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    records = read_data_element(html.read_text("utf-8"))["records"]
    logs = json.dumps([r.get("conversation") for r in records])
    assert records and "answer in text (no calls): the turn ends here" in logs
    assert "decode failed" not in logs
