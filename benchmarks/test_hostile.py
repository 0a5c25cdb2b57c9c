"""Hostile answers at the bounds (run with ``pytest benchmarks``; not part of the test suite).

Each benchmark scores or decodes the worst answer of its kind that the bounds of
``pytest_bfcl.decode.limits`` still let through to a parser, and holds a time bound: every one
must end (as a verdict or a refusal) within ``HOSTILE_TARGET_S`` on a 2-core machine. Before
the bounds, several of these did not end at all (a float precision of 1e9, a list repeated to
10**10 elements, a JSON list that backtracks, a JavaScript array that backtracks).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from pytest_bfcl.backends.execute import MAX_EXECUTED_CALLS, Environment
from pytest_bfcl.check.js_values import convert_js
from pytest_bfcl.check.multi_turn import MultiTurnOptions, evaluate_multi_turn
from pytest_bfcl.check.single_turn import ScoringOptions, evaluate_single_turn
from pytest_bfcl.dataset.fetch import ensure_pinned_data
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.decode import DecodeError, PromptFormat, decode_prompting_ast
from pytest_bfcl.decode.limits import MAX_CONVERTED_CHARS, MAX_TEXT_CHARS
from pytest_bfcl.kinds import open_dataset

HOSTILE_TARGET_S = 5.0
# The heaviest work a stored multi-turn result may ask for: every call it is allowed (500)
# scanning the largest file one call can write. Bounded, but not small: about 3 s unloaded.
HEAVIEST_EXECUTION_TARGET_S = 15.0
LONGEST = MAX_TEXT_CHARS - 100  # room for the call around the hostile part


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return open_dataset(ensure_pinned_data())


def _timed(benchmark, fn: Callable[[], Any], target: float = HOSTILE_TARGET_S) -> Any:
    result = benchmark.pedantic(fn, rounds=3, iterations=1)
    worst = benchmark.stats.stats.max
    assert worst < target, f"took {worst:.2f}s"
    return result


def _decode(text: str, fmt: PromptFormat | None = None, language: str = "python") -> str:
    """``"calls"`` or ``"refused"``: the two ways a decoder may end."""
    try:
        decode_prompting_ast(text, fmt or PromptFormat(), language)
    except DecodeError:
        return "refused"
    return "calls"


# -- decoding at the length bound ---------------------------------------------------------------


def test_json_list_that_backtracks_at_the_length_bound(benchmark):
    text = "<TOOLCALL>[" + "{}, " * (LONGEST // 4) + "x</TOOLCALL>"
    fmt = PromptFormat(ret_fmt="json", tool_call_tag=True)
    assert _timed(benchmark, lambda: _decode(text, fmt)) == "calls"  # no call list: []


def test_flat_python_list_at_the_length_bound(benchmark):
    text = "[f(a=[" + "1," * (LONGEST // 2) + "])]"
    assert _timed(benchmark, lambda: _decode(text)) == "calls"


def test_python_call_list_far_over_the_call_limit(benchmark):
    text = "[" + "f(a=1)," * (LONGEST // 7) + "]"
    assert _timed(benchmark, lambda: _decode(text)) == "refused"


def test_java_array_at_the_length_bound(benchmark):
    text = "A.f(a=new int[]{" + "1," * (LONGEST // 2) + "1})"
    assert _timed(benchmark, lambda: _decode(text, language="java")) == "calls"


def test_javascript_nested_past_the_depth_bound(benchmark):
    text = "f(a=" + "[" * (LONGEST // 2) + "]" * (LONGEST // 2) + ")"
    assert _timed(benchmark, lambda: _decode(text, language="javascript")) == "refused"


def test_repetition_expanding_to_ten_billion_elements(benchmark):
    text = "[f(a=[[0]*100000]*100000)]"
    assert _timed(benchmark, lambda: _decode(text)) == "refused"


def test_text_of_50_mb(benchmark, dataset):
    entry = dataset.entry_map("simple_python")["simple_python_0"]
    answer = dataset.answers("simple_python")[entry.id]
    text = "[calculate_triangle_area(base=1, height=5, unit='" + "x" * 50_000_000 + "')]"
    options = ScoringOptions("prompt", True)
    verdict = _timed(benchmark, lambda: evaluate_single_turn(entry, answer, text, options))
    assert not verdict.valid


# -- checking ---------------------------------------------------------------------------------


def test_javascript_2d_array_that_backtracks_at_the_conversion_bound(benchmark):
    value = "[" + "[], " * ((MAX_CONVERTED_CHARS - 3) // 4) + "x]"
    assert len(value) <= MAX_CONVERTED_CHARS
    assert isinstance(_timed(benchmark, lambda: convert_js(value, "array")), list)


def test_fc_arguments_at_the_length_bound(benchmark, dataset):
    entry = dataset.entry_map("simple_python")["simple_python_0"]
    answer = dataset.answers("simple_python")[entry.id]
    arguments = json.dumps({"base": [1] * (LONGEST // 3), "height": 5})
    result = [{"calculate_triangle_area": arguments}]
    options = ScoringOptions("fc", True)
    verdict = _timed(benchmark, lambda: evaluate_single_turn(entry, answer, result, options))
    assert not verdict.valid


# -- executing --------------------------------------------------------------------------------


def test_multi_turn_calculator_asked_for_a_billion_digits(benchmark, dataset):
    entry = dataset.entry_map("multi_turn_base")["multi_turn_base_15"]
    answer = dataset.answers("multi_turn_base")[entry.id]
    step = [{"logarithm": json.dumps({"value": 2, "base": 3, "precision": 1e9})}]
    result = [[step]] + [["I am done."]] * (len(entry.question) - 1)
    options = MultiTurnOptions("fc")
    verdict = _timed(benchmark, lambda: evaluate_multi_turn(entry, answer, result, options))
    assert not verdict.valid


def test_environment_at_its_call_limit(benchmark):
    def run() -> str:
        env = Environment.create(["MathAPI"], None)
        return env.execute(["sum_values(numbers=[1] * 100000)"] * (MAX_EXECUTED_CALLS + 1))[-1]

    assert f"more than {MAX_EXECUTED_CALLS:,} calls" in _timed(benchmark, run)


def test_environment_calls_each_scanning_the_largest_file(benchmark):
    """The most work a stored result can ask of the file system: one call writes the largest
    file a call can carry (66,000 lines), every other call allowed compares it line by line."""
    write = "echo(content='" + "a\\n" * 66_000 + "', file_name='big.txt')"
    compare = "diff(file_name1='big.txt', file_name2='big.txt')"

    def run() -> str:
        env = Environment.create(["GorillaFileSystem"], None)
        env.execute(["touch(file_name='big.txt')", write])
        return env.execute([compare] * (MAX_EXECUTED_CALLS - 2))[-1]

    assert _timed(benchmark, run, HEAVIEST_EXECUTION_TARGET_S) == '{"diff_lines": ""}'


# -- a conversation flooding its history (a real session, peak memory) ---------------------------

# 4 multi-turn entries, each step answering 37 calls of 199,000 characters (7.4 MB, under the
# 8 MiB answer cap) for as long as it is asked: before --bfcl-max-entry-bytes one entry alone
# reached 1.3 GB and 4 entries 7 GB. Now each ends after 3 answers (16 MiB budget), and the
# session's peak stays near the budget times the entries in flight.
FLOOD_PEAK_MB = 1024


def test_flooding_conversations_stay_within_their_budget(tmp_path):
    import resource

    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    dataset = open_dataset(ensure_pinned_data())
    entries = [e.id for e in dataset.entries("multi_turn_base")[:4]]
    with FakeOpenAI(dataset, ["multi_turn_base"]) as fake:
        fake.faults = {entry: ["flood"] * 21 for entry in entries}
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=no",
             "--bfcl-model=test-model", f"--bfcl-base-url={fake.base_url}",
             "--bfcl-category=multi_turn_base", f"--bfcl-results-dir={tmp_path / 'results'}",
             f"--bfcl-cache-dir={tmp_path / 'cache'}", "-k", " or ".join(entries),
             "--rootdir", str(tmp_path), str(tmp_path)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        requests = sum(fake.requests[e] for e in entries)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    stored = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) / 2**20
    print(f"\n4 flooding entries: {elapsed:.1f} s, {requests} requests, peak {peak_mb:.0f} MB, "
          f"{stored:.0f} MB written")  # fmt: skip
    assert "4 failed" in done.stdout, done.stdout[-2000:]
    assert requests == 12  # 3 answers each, then the budget ends the conversation
    assert peak_mb < FLOOD_PEAK_MB, f"peak {peak_mb:.0f} MB"


def test_a_300_mb_result_line_is_never_held_whole(tmp_path):
    """Before result lines were capped, a 300 MB line took 0.94 GB of memory to replay."""
    import resource

    path = tmp_path / "results" / "non_live" / "BFCL_v4_simple_python_result.json"
    path.parent.mkdir(parents=True)
    with path.open("w") as fh:
        fh.write('{"id": "simple_python_0", "result": "')
        for _ in range(300):
            fh.write("x" * 2**20)
        fh.write('"}\n{"id": "simple_python_1", "result": []}\n')
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=no",
         f"--bfcl-model=replay:{tmp_path / 'results'}", "--bfcl-category=simple_python",
         "-k", "simple_python_0 or simple_python_1", "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\n300 MB result line: {elapsed:.1f} s, peak {peak_mb:.0f} MB")
    assert "2 failed" in done.stdout, done.stdout[-2000:]
    assert peak_mb < 600, f"peak {peak_mb:.0f} MB"


@pytest.mark.parametrize("pad", ["x", '"'], ids=["long string", "escaped quotes"])
def test_a_250_mb_baseline_string_is_read_in_bounded_memory(tmp_path, pad):
    """A baseline just under the 256 MiB a baseline may be, holding one long string: before the
    depth check stopped repeating an alternation per character, it took 23 GB (killed) for
    plain characters and 15 GB and 18 s for escaped quotes."""
    import resource

    from pytest_bfcl.gate import baseline_data

    verdicts = {f"simple_python_{i}": True for i in range(400)}
    data = baseline_data(verdicts, {"model": "m", "mode": "fc"}, {})
    data["pad"] = pad * ((250 if pad == "x" else 120) * 2**20)  # 250 MB written either way
    path = tmp_path / "padded.json"
    path.write_text(json.dumps(data))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest_bfcl.compare", str(path), str(path)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"\n{path.stat().st_size / 2**20:.0f} MB baseline: {elapsed:.1f} s, peak {peak_mb:.0f} MB"
    )
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert peak_mb < 1500, f"peak {peak_mb:.0f} MB"
