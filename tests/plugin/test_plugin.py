"""The pytest integration, end to end, through pytester."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_bfcl.testing.result_files import write_oracle_results


@pytest.fixture
def data_args(data_source) -> list[str]:
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider", "-p", "no:randomly"]


def write_results(
    root: Path, dataset, category: str, group: str, spoil: dict[str, object], drop=()
):
    """Oracle FC output for a category, with some entries replaced or left out."""
    return write_oracle_results(root, dataset, category, spoil, drop, latency=0.5)


def test_without_a_model_the_plugin_stays_out_of_the_way(pytester):
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "BFCL" not in result.stdout.str()


def test_collects_one_item_per_entry_with_stable_ids(pytester, data_args):
    result = pytester.runpytest(
        "--collect-only",
        "-q",
        "--bfcl-model=oracle",
        "--bfcl-category=live_parallel,live_relevance",
        *data_args,
    )
    lines = [line for line in result.stdout.lines if line.startswith("bfcl/")]
    assert len(lines) == 32
    assert lines[0] == "bfcl/live_parallel::live_parallel_0-0-0"
    assert "32 tests collected" in result.stdout.str()


def test_oracle_run_prints_a_score_table(pytester, data_args):
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=simple_java,live_parallel", *data_args
    )
    result.assert_outcomes(passed=105, xfailed=11)
    out = result.stdout.str()
    assert "BFCL V4 scores" in out
    assert "simple_java                      89    100    89.00%" in out
    assert "Overall (V4)                     n/a  not computed: " in out
    assert result.ret == 0


def test_marks_keywords_and_deselect(pytester, data_args):
    base = ["--bfcl-model=oracle", "--bfcl-category=live_parallel,live_relevance", *data_args]
    pytester.runpytest(*base, "-m", "bfcl_live_relevance").assert_outcomes(passed=16)
    pytester.runpytest(*base, "-k", "live_parallel_3").assert_outcomes(passed=1)
    pytester.runpytest(
        *base, "--deselect", "bfcl/live_parallel::live_parallel_0-0-0", "-m", "bfcl_live_parallel"
    ).assert_outcomes(passed=15)


def test_web_search_off_skips_with_a_reason_and_the_report_says_so(pytester, data_args):
    result = pytester.runpytest(
        "--bfcl-model=oracle",
        "--bfcl-category=web_search_base,memory_rec_sum",
        "--bfcl-web=off",
        "-rs",
        *data_args,
    )
    result.assert_outcomes(passed=155, skipped=100)
    out = result.stdout.str()
    assert "100 skipped (web search is off in this run (--bfcl-web=off)" in out
    assert re.search(r"Web Search\s+skipped", out)
    assert re.search(r"memory_rec_sum\s+155\s+155\s+100\.00%", out)


def test_multi_turn_items_run_the_conversation_and_report_the_failing_turn(
    pytester, data_args, dataset, tmp_path
):
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=multi_turn_miss_param", *data_args
    )
    result.assert_outcomes(passed=200)
    # a stored result whose second turn does the wrong thing: the report names the turn,
    # the calls, and the state difference
    results = tmp_path / "results" / "m"
    (results / "multi_turn").mkdir(parents=True)
    entry = dataset.entry_map("multi_turn_base")["multi_turn_base_0"]
    stored = {
        "id": entry.id,
        "result": [
            [
                [
                    {"cd": '{"folder": "document"}'},
                    {"mkdir": '{"dir_name": "temp"}'},
                    {"mv": '{"source": "final_report.pdf", "destination": "temp"}'},
                ],
                "ok",
            ],
            [[{"mkdir": '{"dir_name": "wrong"}'}], "ok"],
            ["ok"],
            ["ok"],
        ],
    }
    path = results / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    path.write_text(json.dumps(stored) + "\n")
    result = pytester.runpytest(
        f"--bfcl-model=replay:{results}", "--bfcl-category=multi_turn_base",
        "--bfcl-explain=multi_turn_base_0", *data_args,
    )  # fmt: skip
    result.assert_outcomes(failed=1, skipped=199)
    out = result.stdout.str()
    assert "multi_turn:instance_state_mismatch" in out
    assert "turn 1: the model made 1 call(s)" in out
    assert "mkdir(dir_name='wrong')" in out and "GorillaFileSystem.root" in out
    assert "only in the model:    /workspace/document/wrong/" in out


def test_format_sensitivity_needs_prompting_mode(pytester, data_args):
    result = pytester.runpytest(
        "--bfcl-model=oracle",
        "--bfcl-category=format_sensitivity",
        "-k",
        "simple_python_19",
        "-rs",
        *data_args,
    )
    result.assert_outcomes(skipped=26)
    assert "--bfcl-mode=prompt" in result.stdout.str()


def test_replay_failure_report_junit_and_json(pytester, data_args, dataset, tmp_path):
    results = tmp_path / "results" / "my-model"
    wrong = {"live_parallel_1-0-1": [{"get_weather": '{"city": "Nowhere"}'}]}
    write_results(results, dataset, "live_parallel", "live", wrong, drop={"live_parallel_2-0-2"})
    junit = tmp_path / "junit.xml"
    report = tmp_path / "report.json"
    result = pytester.runpytest(
        f"--bfcl-model=replay:{results.parent}",
        "--bfcl-category=live_parallel",
        f"--junitxml={junit}",
        f"--bfcl-report={report}",
        "-rs",
        *data_args,
    )
    result.assert_outcomes(passed=14, failed=1, skipped=1)
    out = result.stdout.str()
    # the closing list: a line per failure; the full explanation is in the junit file
    assert "live_parallel_1-0-1 [live_parallel] parallel_function_checker_no_order" in out
    assert "output:" not in out
    assert "no stored result for live_parallel_2-0-2" in out

    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["live_parallel_1-0-1"].iter("property")}
    assert props["bfcl_id"] == "live_parallel_1-0-1"
    assert props["bfcl_category"] == "live_parallel"
    assert props["bfcl_valid"] == "false"
    assert props["bfcl_error_type"].startswith("parallel_function_checker_no_order")
    failure = cases["live_parallel_1-0-1"].find("failure")
    assert failure is not None
    assert "BFCL live_parallel_1-0-1 [live_parallel] failed" in (failure.text or "")
    assert "output:" in failure.text and "expected:" in failure.text
    ok = {p.get("name"): p.get("value") for p in cases["live_parallel_0-0-0"].iter("property")}
    assert ok["bfcl_valid"] == "true" and "bfcl_error_type" not in ok

    data = json.loads(report.read_text())
    cat = data["categories"]["live_parallel"]
    assert (cat["correct"], cat["total"], cat["skipped"], cat["complete"]) == (14, 15, 1, False)
    assert cat["accuracy"] == pytest.approx(14 / 15)
    assert data["groups"]["live"]["accuracy"] is None  # other live categories did not run
    assert data["partial"] is True and data["overall"]["accuracy"] is None
    meta = data["metadata"]
    assert meta["model"] == "replay:my-model" and meta["mode"] == "fc"
    assert meta["dataset"]["version"] == "custom"
    assert meta["plugin_version"]


def test_malformed_replay_file_is_an_error_naming_file_and_line(pytester, data_args, tmp_path):
    path = tmp_path / "res" / "live" / "BFCL_v4_live_parallel_result.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"id": "live_parallel_0-0-0", "result": []}\n{oops\n')
    result = pytester.runpytest(
        f"--bfcl-model=replay:{tmp_path / 'res'}", "--bfcl-category=live_parallel", *data_args
    )
    # found before anything runs, and said once (not one error per entry)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("BFCL_v4_live_parallel_result.json:2: invalid JSON") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bfcl-model=replay:"], "replay needs a directory"),
        (["--bfcl-model=replay:/no/such/dir"], "does not exist"),
        (
            ["--bfcl-model=oracle", "--bfcl-category=simple_pyhton"],
            "unknown BFCL category 'simple_pyhton'",
        ),
        (["--bfcl-model=oracle", "--bfcl-mode=chat"], "mode"),
    ],
)
def test_usage_errors(pytester, data_args, args, message):
    result = pytester.runpytest(*args, *data_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_ini_options(pytester, data_source):
    pytester.makeini(
        f"[pytest]\nbfcl_model = oracle\nbfcl_category = live_relevance\nbfcl_data = {data_source.data_dir}\n"
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=16)


def test_last_failed_reruns_only_failing_entries(pytester, data_args, dataset, tmp_path):
    results = tmp_path / "r"
    write_results(results, dataset, "live_parallel", "live", {"live_parallel_4-1-0": "no call"})
    args = [
        f"--bfcl-model=replay:{results}",
        "--bfcl-category=live_parallel",
        f"--bfcl-data={dataset.root}",
    ]
    pytester.runpytest(*args).assert_outcomes(passed=15, failed=1)
    rerun = pytester.runpytest(*args, "--lf")
    rerun.assert_outcomes(failed=1)


def test_xdist_gives_the_same_report(pytester, data_args, dataset, tmp_path):
    pytest.importorskip("xdist")
    results = tmp_path / "r"
    write_results(results, dataset, "live_parallel", "live", {"live_parallel_4-1-0": "no call"})
    from pytest_bfcl.report.html.page import read_data_element

    reports, pages = [], []
    for workers in ("0", "2"):
        report = tmp_path / f"report-{workers}.json"
        html = tmp_path / f"report-{workers}.html"
        result = pytester.runpytest_subprocess(
            f"--bfcl-model=replay:{results}",
            "--bfcl-category=live_parallel",
            "-n",
            workers,
            f"--bfcl-report={report}",
            f"--bfcl-html={html}",
            *data_args,
        )
        result.assert_outcomes(passed=15, failed=1)
        reports.append(json.loads(report.read_text()))
        pages.append(read_data_element(html.read_text("utf-8")))
    assert reports[0]["categories"] == reports[1]["categories"]
    assert reports[0]["groups"] == reports[1]["groups"]
    # The HTML records travel from the workers whole: the same records (in arrival order).
    one, two = ({r["id"]: r for r in page.pop("records")} for page in pages)
    assert len(one) == 16 and one == two
    assert pages[0] == pages[1]  # the function docs, the categories


def test_stepwise_stops_and_resumes_on_bfcl_items(pytester, dataset, tmp_path):
    results = tmp_path / "r"
    write_results(results, dataset, "live_parallel", "live", {"live_parallel_4-1-0": "no call"})
    args = [
        f"--bfcl-model=replay:{results}",
        "--bfcl-category=live_parallel",
        f"--bfcl-data={dataset.root}",
        "--sw",
    ]
    first = pytester.runpytest(*args)
    first.assert_outcomes(passed=4, failed=1)  # stops at the first failure
    second = pytester.runpytest(*args, "--sw-skip")
    second.assert_outcomes(passed=11, failed=1, deselected=4)


def test_a_session_inside_another_process_leaves_its_garbage_collector_alone(pytester, data_args):
    # Freezing the heap after collection pays in a process of its own (pytest's closing
    # collections skip the parsed data and the items); a session inside another process
    # (pytester's inline runs) would keep its cycles until that process exits.
    import gc

    frozen = gc.get_freeze_count()
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-category=live_relevance", *data_args)
    result.assert_outcomes(passed=16)
    assert gc.get_freeze_count() == frozen


def test_a_session_in_its_own_process_freezes_what_it_collected(pytester, data_args):
    pytester.makeconftest(
        "import gc\n"
        "def pytest_sessionfinish(session):\n"
        "    print(f'frozen objects: {gc.get_freeze_count()}')\n"
    )
    result = pytester.runpytest_subprocess(
        "--bfcl-model=oracle", "--bfcl-category=live_relevance", "-s", *data_args
    )
    result.assert_outcomes(passed=16)
    frozen = int(re.search(r"frozen objects: (\d+)", result.stdout.str()).group(1))
    assert frozen > 10_000  # the modules, the parsed entries and the items


def test_garbage_left_by_tests_is_still_collected_and_reported_at_the_end(pytester, data_args):
    # The session collects once and freezes what is left before pytest's own closing
    # collections: a test's cyclic garbage with a failing __del__ must still be found then,
    # and pytest must still report it.
    pytester.makepyfile(
        test_leak=(
            "class Cycle:\n"
            "    def __init__(self):\n"
            "        self.me = self\n"
            "    def __del__(self):\n"
            "        raise RuntimeError('raised while collected')\n"
            "def test_leaves_a_cycle():\n"
            "    import gc\n"
            "    gc.disable()\n"
            "    Cycle()\n"
        )
    )
    pytester.makeconftest(
        "import gc\n"
        "def pytest_unconfigure(config):\n"
        "    print(f'frozen at the end: {gc.get_freeze_count()}')\n"
    )
    result = pytester.runpytest_subprocess(
        "--bfcl-model=oracle", "--bfcl-category=live_relevance", "-s", *data_args
    )
    result.assert_outcomes(passed=17)
    assert "raised while collected" in result.stdout.str() + result.stderr.str()
    frozen = int(re.search(r"frozen at the end: (\d+)", result.stdout.str()).group(1))
    assert frozen > 10_000


def test_a_program_that_calls_pytest_main_keeps_its_garbage_collector(tmp_path, data_source):
    # pytest.main() from a script (a loop over models, say) is not pytest's own command line:
    # freezing would keep the script's cycles until it exits.
    import subprocess
    import sys

    code = (
        "import gc, pytest; "
        f"pytest.main(['--bfcl-model=oracle', '--bfcl-category=live_relevance', "
        f"'--bfcl-data={data_source.data_dir}', '-p', 'no:cacheprovider', '-q', "
        f"'--rootdir', {str(tmp_path)!r}, {str(tmp_path)!r}]); "
        "print('frozen', gc.get_freeze_count(), 'enabled', gc.isenabled())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert "frozen 0 enabled True" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_collector_comes_back_when_the_last_thread_leaves_its_pause():
    import gc
    import threading

    from pytest_bfcl.perf import paused_gc

    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with paused_gc():
            inside.set()
            release.wait()

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait()
    with paused_gc():
        pass
    assert not gc.isenabled()  # the other thread is still building
    release.set()
    thread.join()
    assert gc.isenabled()


@pytest.mark.parametrize(
    ("spec", "fixed"),
    [
        ("Oracle", "oracle"),
        ("ORACLE:flaky=0.1", "oracle:flaky=0.1"),
        ("Replay:results/x", "replay:results/x"),
        ("orcale", "oracle"),
        ("rplay:results/x", "replay:results/x"),
        ("vLLM:/ckpt", "vllm:/ckpt"),
        ("replay", "replay:DIR"),
    ],
)
def test_a_mistyped_builtin_model_is_a_usage_error(pytester, spec, fixed, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = pytester.runpytest(f"--bfcl-model={spec}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"did you mean --bfcl-model={fixed}?" in err
    assert "Traceback" not in err


def test_builtin_name_mistakes_leave_endpoint_names_alone():
    from pytest_bfcl.builtin_models import builtin_name_mistake

    for name in ("gpt-4o", "Qwen/Qwen3-8B", "qwen3:8b", "llama3:8b", "oracle-7b", "vllm:/ckpt"):
        assert builtin_name_mistake(name, endpoint_given=False) is None
    # a near spelling may be a served model's name when an endpoint is given; other case not
    assert builtin_name_mistake("orcale", endpoint_given=True) is None
    assert builtin_name_mistake("Oracle", endpoint_given=True) is not None
