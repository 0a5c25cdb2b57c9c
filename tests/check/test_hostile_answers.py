"""Hostile answers (any size, characters or shape) end as the model's failure, ``F``, with a
readable reason, in bounded time and memory: through the scoring functions directly, through
the decoders fuzzed with hostile values, and end to end through ``--bfcl-model=replay:DIR``.

Time limits here are safety nets only (a regression must not hang the suite); how long the
worst cases take is measured in benchmarks/test_hostile.py.
"""

from __future__ import annotations

import faulthandler
import json
import random
import re
import resource
import tracemalloc
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.backends.execute import MAX_EXECUTED_CALLS, Environment
from pytest_bfcl.backends.math_api import MathAPI
from pytest_bfcl.check.agentic import final_message
from pytest_bfcl.check.java_values import convert_java
from pytest_bfcl.check.js_values import _array_2d_end, convert_js
from pytest_bfcl.check.multi_turn import MultiTurnOptions, decode_step, evaluate_multi_turn
from pytest_bfcl.check.single_turn import ScoringOptions, evaluate_single_turn
from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.decode import DecodeError, PromptFormat, decode_fc_ast, decode_prompting_ast
from pytest_bfcl.decode.formats import json_call_list_span
from pytest_bfcl.decode.limits import MAX_TEXT_CHARS, short_repr
from pytest_bfcl.report.render import explain_failure

SAFETY_NET_S = 60  # a hang fails (and ends) the run instead of stalling it
PEAK_MEMORY_MB = 1_500
IN_PROCESS_PEAK_MB = 400  # traced allocations while scoring one case

FORMAT_JSON = (
    "format_sensitivity_6:ret_fmt=json&tool_call_tag=True&func_doc_fmt=python"
    "&prompt_fmt=plaintext&style=classic:simple_python_19"
)
MULTI_TURN = "multi_turn_base_15"  # GorillaFileSystem and MathAPI; turn 0 creates a file


def _turns(step: Any, count: int = 5) -> list[list[Any]]:
    """A multi-turn result whose first turn is one hostile step (multi_turn_base_15 has five
    turns); the other turns answer with text."""
    return [[step]] + [["I am done."]] * (count - 1)


def _first_turn(step: Any) -> Any:
    """Marks a multi-turn case's result: its first turn; the others are added per entry."""
    return ("first turn", step)


def _fc(name: str, arguments: str) -> list[dict[str, str]]:
    return [{name: arguments}]


@dataclass(frozen=True)
class Case:
    name: str
    entry_id: str
    mode: str
    result: Callable[[], Any]  # built when the case runs (some are 50 MB)
    reason: str  # a regex the failure explanation must contain


NESTED = "[" * 100_000 + "]" * 100_000
NESTED_50000 = "[" * 50_000 + "]" * 50_000  # within the length bound: json.loads must refuse it
CASES = [
    # -- single turn, prompting --------------------------------------------------------------
    Case(
        "repetition_expanding_to_10e10",
        "simple_python_0",
        "prompt",
        lambda: "[calculate_triangle_area(base=[[0]*100000]*100000, height=5)]",
        r"repeated sequence too long \(10,000,100,000 elements when expanded",
    ),
    Case(
        "many_repetitions_in_one_answer",
        "simple_python_1",
        "prompt",
        lambda: "[calculate_triangle_area(base=[" + ",".join(["[0]*100000"] * 2000) + "])]",
        r"more than 1,000,000 elements when expanded",
    ),
    Case(
        "percent_format_of_a_gigabyte",
        "simple_python_2",
        "prompt",
        lambda: "[calculate_triangle_area(base='%0999999999d' % 1, height=5)]",
        r"'%' template with widths too large",
    ),
    Case(
        "hex_literal_of_5000_digits",
        "simple_python_3",
        "prompt",
        lambda: "[calculate_triangle_area(base=0x" + "f" * 5000 + ", height=5)]",
        r"integer of 20,000 bits is too large",
    ),
    Case(
        "text_of_50_mb",
        "simple_python_4",
        "prompt",
        lambda: "[calculate_triangle_area(base=1, height=5, unit='" + "x" * 50_000_000 + "')]",
        r"50,000,052 characters long; at most 200,000 are read",
    ),
    Case(
        "brackets_nested_100000_deep",
        "simple_python_5",
        "prompt",
        lambda: NESTED,
        r"too many nested parentheses",
    ),
    Case(
        "lone_surrogate",
        "simple_python_6",
        "prompt",
        lambda: "[calculate_triangle_area(base=1, height=5, unit='\ud800')]",
        r"surrogates not allowed",
    ),
    Case(
        "nul_bytes",
        "simple_python_7",
        "prompt",
        lambda: "[calculate_triangle_area(base=1, height=5)]\x00\x00",
        r"null bytes",
    ),
    Case(
        "json_list_that_backtracks",
        FORMAT_JSON,
        "prompt",
        lambda: "<TOOLCALL>[" + "{}, " * 40 + "x</TOOLCALL>",
        r"Wrong number of functions",
    ),
    Case(
        "java_nested_50000_deep",
        "simple_java_0",
        "prompt",
        lambda: (
            "GeometryPresentation.createPresentation(controller="
            + "(" * 50_000
            + "1"
            + ")" * 50_000
            + ", parent=x)"
        ),
        r"nested more than 400 levels deep",
    ),
    Case(
        "javascript_nested_50000_deep",
        "simple_javascript_0",
        "prompt",
        lambda: "validateUserInput(inputField=" + "[" * 50_000 + "]" * 50_000 + ")",
        r"nested more than 400 levels deep",
    ),
    Case(
        "javascript_array_that_backtracks",
        "simple_javascript_24",
        "prompt",
        lambda: "getUniqueSorted(array=[" + "[], " * 200 + "x])",  # valid JavaScript
        r"Nested type checking failed for parameter 'array'",
    ),
    Case(
        "java_hashmap_that_backtracks",
        "simple_java_38",
        "prompt",
        lambda: (
            'NestedValueFetcher.createSourceMapStub(filteredSource="'
            + 'new HashMap<>(){{put(\\"a\\", ' * 3_000
            + '")'
        ),
        r"filteredSource",
    ),
    # -- single turn, function calling -------------------------------------------------------
    Case(
        "json_integer_of_5000_digits",
        "simple_python_10",
        "fc",
        lambda: _fc("calculate_triangle_area", '{"base": ' + "9" * 5000 + ', "height": 5}'),
        r"unreadable arguments: Exceeds the limit \(4300 digits\)",
    ),
    Case(
        "json_nested_50000_deep",
        "simple_python_11",
        "fc",
        lambda: _fc("calculate_triangle_area", '{"base": ' + NESTED_50000 + ', "height": 5}'),
        r"arguments that are not JSON: maximum recursion depth",
    ),
    Case(
        "json_nested_150_deep",
        "simple_python_12",
        "fc",
        lambda: _fc("calculate_triangle_area", '{"base": ' + "[" * 150 + "]" * 150 + "}"),
        r"nested more than 100 levels deep",
    ),
    Case(
        "json_lone_surrogate",
        "simple_python_0",
        "fc",
        lambda: _fc("calculate_triangle_area", '{"base": 10, "height": 5, "unit": "\\ud800"}'),
        r"Invalid value for parameter 'unit'",
    ),
    Case(
        "json_nan_and_infinity",
        "simple_python_0",
        "fc",
        lambda: _fc("calculate_triangle_area", '{"base": NaN, "height": Infinity}'),
        r"Incorrect type for parameter 'base'",
    ),
    Case(
        "json_huge_float",
        "simple_python_0",
        "fc",
        lambda: _fc("calculate_triangle_area", '{"base": 1e999999, "height": 5}'),
        r"Incorrect type for parameter 'base'",
    ),
    Case(
        "arguments_not_an_object",
        "simple_python_13",
        "fc",
        lambda: _fc("calculate_triangle_area", "[1, 2, 3]"),
        r"Did not output in the specified format",
    ),
    Case(
        "arguments_not_a_string",
        "simple_python_14",
        "fc",
        lambda: [{"calculate_triangle_area": [1, 2]}],
        r"arguments are not a JSON string: \[1, 2\]",
    ),
    Case(
        "arguments_of_2_mb",
        "simple_python_15",
        "fc",
        lambda: _fc("calculate_triangle_area", '{"unit": "' + "x" * 2_000_000 + '"}'),
        r"2,000,012 characters long; at most 200,000 are read",
    ),
    Case(
        "five_thousand_tool_calls",
        "simple_python_16",
        "fc",
        lambda: [{"calculate_triangle_area": "{}"}] * 5_000,
        r"5,000 tool calls; at most 1,000 are read",
    ),
    # -- multi-turn --------------------------------------------------------------------------
    Case(
        "logarithm_float_precision_1e9",
        MULTI_TURN,
        "fc",
        lambda: _first_turn(_fc("logarithm", '{"value": 2, "base": 3, "precision": 1e9}')),
        r"precision must be at most 10000",
    ),
    Case(
        "logarithm_string_precision",
        "multi_turn_base_28",
        "fc",
        lambda: _first_turn(_fc("logarithm", '{"value": 2, "base": 3, "precision": "1000000000"}')),
        r"precision must be at most 10000",
    ),
    Case(
        "square_root_precision_10e9",
        "multi_turn_base_31",
        "fc",
        lambda: _first_turn(_fc("square_root", '{"number": 2, "precision": 1000000000}')),
        r"precision must be at most 10000",
    ),
    Case(
        "round_to_minus_10e9_places",
        "multi_turn_base_32",
        "fc",
        lambda: _first_turn(_fc("round_number", '{"number": 5, "decimal_places": -1000000000}')),
        r"decimal_places must be between",
    ),
    Case(  # the reference's eval gives inf: a call, which irrelevance fails
        "float_power_overflowing_to_infinity",
        "irrelevance_0",
        "prompt",
        lambda: "[f(a=1e999**2)]",
        r"irrelevance_error:decoder_success",
    ),
    Case(
        "float_power_of_infinity_in_a_call",
        "simple_python_17",
        "prompt",
        lambda: "[get_prime_factors(number=2**1e999, formatted=True)]",
        r"type_error:simple\n.*got float. Parameter value: inf",
    ),
    Case(
        "lone_surrogate_in_an_irrelevance_answer",
        "irrelevance_1",
        "prompt",
        lambda: "[f(a='\\ud800')]",  # an escape in the text: a string holding a surrogate
        r"irrelevance_error:decoder_success",
    ),
    Case(
        "lone_surrogate_in_a_call",
        "simple_python_7",
        "fc",
        lambda: _fc("calculate_circumference", '{"radius": 4, "unit": "\ud800"}'),
        r"value_error:string\n.*Invalid value for parameter 'unit'",
    ),
    Case(
        "multi_turn_json_integer_of_5000_digits",
        "multi_turn_base_34",
        "fc",
        lambda: _first_turn(_fc("mean", '{"numbers": [' + "9" * 5000 + "]}")),
        r"Model response list is empty for turn 0",
    ),
    Case(
        "logarithm_float_precision_in_text",
        MULTI_TURN,
        "prompt",
        lambda: _first_turn("[logarithm(value=2, base=3, precision=1e9)]"),
        r"precision must be at most 10000",
    ),
    Case(
        "multi_turn_repetition_expanding_to_10e10",
        "multi_turn_base_35",
        "prompt",
        lambda: _first_turn("[mean(numbers=[[0]*100000]*100000)]"),
        r"Model response list is empty for turn 0",
    ),
    Case(
        "multi_turn_text_of_50_mb",
        "multi_turn_base_36",
        "prompt",
        lambda: _first_turn("[touch(file_name='" + "x" * 50_000_000 + "')]"),
        r"Model response list is empty for turn 0",
    ),
]


def _category(entry_id: str) -> str:
    if entry_id.startswith("format_sensitivity"):
        return "format_sensitivity"
    return entry_id.rsplit("_", 1)[0]


def _entry(dataset, entry_id: str):
    category = _category(entry_id)
    return next(e for e in dataset.entries(category) if e.id == entry_id), category


def _result(dataset, case: Case) -> Any:
    result = case.result()
    if isinstance(result, tuple) and result[:1] == ("first turn",):
        entry, _ = _entry(dataset, case.entry_id)
        return _turns(result[1], len(entry.question))
    return result


def _score(dataset, case: Case, result: Any) -> Verdict:
    entry, category = _entry(dataset, case.entry_id)
    answer = dataset.answers(category).get(entry.id)
    if category.startswith("multi_turn"):
        return evaluate_multi_turn(entry, answer, result, MultiTurnOptions(case.mode))
    return evaluate_single_turn(entry, answer, result, ScoringOptions(case.mode, True))


@pytest.fixture
def safety_net():
    """Ends the whole run with the stack of every thread if one case hangs."""
    faulthandler.dump_traceback_later(SAFETY_NET_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# -- (a) scoring in process ---------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_answer_is_a_failure_with_a_reason(dataset, case, safety_net):
    result = _result(dataset, case)  # the dataset is parsed before memory is traced
    tracemalloc.start()
    try:
        verdict = _score(dataset, case, result)
        explanation = explain_failure(verdict)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not verdict.valid
    assert re.search(case.reason, explanation), explanation[:2000]
    assert len(explanation) < 20_000  # readable: the failure report stays short
    assert peak < IN_PROCESS_PEAK_MB * 2**20, f"{peak / 2**20:.0f} MB traced"


def test_a_raw_lone_surrogate_in_a_prompting_answer_is_no_call_as_for_the_reference(dataset):
    # The reference's ast.parse cannot encode the text (UnicodeEncodeError): a decode failure,
    # which passes irrelevance and fails a call's entry, the same here.
    irrelevance = Case("raw", "irrelevance_2", "prompt", lambda: "[f(a='\ud800')]", "")
    assert _score(dataset, irrelevance, irrelevance.result()).valid
    call = Case("raw", "simple_python_8", "prompt", lambda: "[f(a='\ud800')]", "")
    verdict = _score(dataset, call, call.result())
    assert not verdict.valid and "surrogates not allowed" in explain_failure(verdict)


# -- (b) end to end through replay --------------------------------------------------------------


# The reference's result layout: <root>/<group>/BFCL_v4_<category>_result.json.
_GROUP_DIRS = {
    "irrelevance": "non_live",
    "simple_python": "non_live",
    "simple_java": "non_live",
    "simple_javascript": "non_live",
    "multi_turn_base": "multi_turn",
    "format_sensitivity": "format_sensitivity",
}


def _write_replay(dataset, root: Path, cases: list[Case]) -> list[str]:
    by_file: dict[Path, list[str]] = {}
    for case in cases:
        category = _category(case.entry_id)
        path = root / _GROUP_DIRS[category] / f"BFCL_v4_{category}_result.json"
        record = {"id": case.entry_id, "result": _result(dataset, case)}
        by_file.setdefault(path, []).append(json.dumps(record))
    for path, lines in by_file.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
    return sorted({_category(c.entry_id) for c in cases})


def _one_case_per_entry(mode: str) -> list[Case]:
    chosen: dict[str, Case] = {}
    for case in CASES:
        if case.mode == mode:
            chosen.setdefault(case.entry_id, case)
    return list(chosen.values())


def _e2e_cases(mode: str) -> list[Case]:
    """Cases end to end: the first of each entry (a replay file holds one result per id)."""
    return _one_case_per_entry(mode)


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_hostile_answers_fail_end_to_end_through_replay(
    pytester, dataset, data_source, tmp_path, mode
):
    cases = _e2e_cases(mode)
    assert len(cases) >= 9
    categories = _write_replay(dataset, tmp_path / "results" / "hostile", cases)
    result = pytester.runpytest_subprocess(
        f"--bfcl-model=replay:{tmp_path / 'results'}",
        f"--bfcl-mode={mode}",
        f"--bfcl-category={','.join(categories)}",
        f"--bfcl-data={data_source.data_dir}",
        "--tb=short",  # each failure's explanation, not only its line in the summary
        f"--junitxml={tmp_path / 'junit.xml'}",
        f"--bfcl-report={tmp_path / 'report.json'}",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-k",
        " or ".join(_k_expression(c.entry_id) for c in cases),
        timeout=SAFETY_NET_S * 3,
    )
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    outcomes = result.parseoutcomes()
    out = result.stdout.str()
    assert outcomes.get("failed") == len(cases), out[-5000:]
    assert "error" not in outcomes and "errors" not in outcomes, out[-5000:]
    for case in cases:
        assert re.search(case.reason, out), (case.name, out[-5000:])
    assert peak_mb < PEAK_MEMORY_MB, f"peak {peak_mb:.0f} MB"
    report = json.loads((tmp_path / "report.json").read_text())  # written, and readable
    assert sum(c["total"] - c["correct"] for c in report["categories"].values()) == len(cases)
    assert ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")


def _k_expression(entry_id: str) -> str:
    # ``-k`` matches words of the item name; the format-sensitivity id holds ``=`` and ``&``.
    return entry_id.split(":")[0]


def test_every_case_is_run_end_to_end_but_those_sharing_an_entry():
    shared = [c.name for c in CASES if c not in _e2e_cases(c.mode)]
    assert shared == ["json_nan_and_infinity", "json_huge_float"]


# -- fuzzing the decoders and checkers ----------------------------------------------------------


def _hostile_values(rnd: random.Random) -> list[Any]:
    shared = [0] * 1_000
    return [
        None,
        True,
        float("nan"),
        float("inf"),
        -1e308,
        10**4000,
        -(10**5000),
        "\ud800",
        "\x00",
        "x" * 100_000,
        [[shared] * 1_000] * 10,
        {1: 2},
        {(1, 2): [3]},
        {"a": {"b": {"c": {}}}},
        [],
        {},
        [{}],
        [{"f": None}],
        [{"f": "{"}],
        [{"f": '{"a": ' + "[" * 500 + "]" * 500 + "}"}],
        [{1: "{}"}],
        [{None: "{}"}],
        [{"f": {"a": 10**5000}}],
        rnd.randbytes(64),
        "".join(chr(rnd.randrange(0x110000)) for _ in range(200)),
    ]


def _hostile_texts(rnd: random.Random) -> list[str]:
    alphabet = "[]{}()<>,:='\"\\ \n\t0123456789.e-+xnew*%#;@"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 80))) for _ in range(300)]
    texts += [
        "<TOOLCALL>" * 10_000,
        "[" * 300_000,
        "{" * 300_000,
        "<functions>" + "<function>" * 10_000,
        '<!DOCTYPE x [<!ENTITY a "aaaa">]><functions/>',
        "[f(a=" + "-" * 100_000 + "1)]",
        "[f(a=" + "not " * 20_000 + "1)]",
        "[f(a=" + "1+" * 50_000 + "1)]",
        "[f(a=1<<4097)]",
        "[f(a=2**100000)]",
        "[f(a=(10**4000)*(10**4000)*(10**4000)*(10**4000))]",
        "[f(a='%*d' % (10**9, 1))]",
        "[f(a={[1]: 2})]",
        "[f(a={1, [2]})]",
        "[f(a=" + "f(" * 90 + ")" * 90 + ")]",
        "x" * (MAX_TEXT_CHARS + 1),
    ]
    return texts


_FORMATS = [
    PromptFormat(),
    PromptFormat(tool_call_tag=True),
    PromptFormat(ret_fmt="json"),
    PromptFormat(ret_fmt="verbose_xml"),
    PromptFormat(ret_fmt="concise_xml", tool_call_tag=True),
]


def test_decoders_only_return_calls_or_refuse_with_a_decode_error(safety_net):
    rnd = random.Random(10)
    for text in _hostile_texts(rnd):
        for fmt in _FORMATS:
            for language in ("python", "java", "javascript"):
                try:
                    decoded = decode_prompting_ast(text, fmt, language)
                except DecodeError as exc:
                    assert str(exc)  # a reason, whatever it says
                    continue
                assert decoded is None or isinstance(decoded, list)
                short_repr(decoded)  # printable
    for value in _hostile_values(rnd):
        for mode in ("fc", "prompt"):
            try:
                decode_step(value, mode)
            except DecodeError as exc:
                assert str(exc)
        try:
            decoded = decode_fc_ast(value)
        except DecodeError as exc:
            assert str(exc)
        else:
            json.dumps(decoded, default=repr)  # what the report renders stays printable


def test_scoring_hostile_values_always_gives_a_verdict(dataset, safety_net):
    rnd = random.Random(11)
    entries = ["simple_python_0", "simple_java_38", "simple_javascript_24", FORMAT_JSON]
    for value in _hostile_values(rnd) + _hostile_texts(rnd)[-12:]:
        for entry_id in entries:
            for mode in ("fc", "prompt"):
                verdict = _score(dataset, Case("", entry_id, mode, lambda: None, ""), value)
                assert not verdict.valid
                explain_failure(verdict)
        for mode in ("fc", "prompt"):
            verdict = _score(dataset, Case("", MULTI_TURN, mode, lambda: None, ""), _turns(value))
            assert not verdict.valid
            explain_failure(verdict)


# -- the bounds themselves ----------------------------------------------------------------------


_OLD_JSON_LIST = re.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", re.DOTALL)
_OLD_JS_2D = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)


def _random_texts(tokens: list[str], count: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(tokens) for _ in range(rnd.randint(0, 14))) for _ in range(count)]


def test_linear_json_list_matcher_equals_the_reference_regex():
    tokens = ["[", "]", "{", "}", ",", " ", "\n", "\u2003", "x", "{}", "[{", "}]", "}, {", '"a"']
    matched = 0
    for text in _random_texts(tokens, 40_000, seed=1):
        expected = _OLD_JSON_LIST.search(text)
        assert json_call_list_span(text) == (expected.span() if expected else None), text
        matched += expected is not None
    assert matched > 4_000  # the table exercises matches, not only misses


def test_linear_javascript_2d_array_matcher_equals_the_reference_regex():
    tokens = ["[", "]", ",", " ", "\n", "x", "[]", "[[", "]]", "], [", "new Array(", ")", "1"]
    matched = 0
    for text in _random_texts(tokens, 40_000, seed=2):
        expected = _OLD_JS_2D.match(text)
        assert _array_2d_end(text) == (expected.end() if expected else None), text
        matched += expected is not None
    assert matched > 1_000


def test_converters_leave_overlong_values_as_text(safety_net):
    value = 'new HashMap<>(){{put("a", ' * 1_000
    assert convert_java(value, "HashMap") == value
    assert convert_java("9" * 5_000, "integer") == "9" * 5_000
    assert convert_js("[[" + "], [" * 1_000, "array") == "[[" + "], [" * 1_000
    assert convert_js("[[1, 2], [3]]", "array") == [[1, 2], [3]]  # short values still convert


@pytest.mark.parametrize(
    ("call", "error"),
    [
        ("logarithm(value=2, base=3, precision=1e9)", "precision must be at most"),
        ("logarithm(value=2, base=3, precision='1000000000')", "precision must be at most"),
        ("logarithm(value=2, base=3, precision=True)", "result"),
        ("logarithm(value=2, base=3, precision=float('nan'))", "not defined"),
        ("logarithm(value=2, base=3, precision=-5)", "result"),
        ("square_root(number=2, precision=10**9)", "precision must be at most"),
        ("square_root(number=2, precision=1e9)", "error"),
        ("round_number(number=5, decimal_places=-10**9)", "decimal_places must be between"),
        ("round_number(number=5.5, decimal_places=10**9)", "decimal_places must be between"),
        ("power(base=10, exponent=10**12)", "too large"),
        ("power(base=10.0, exponent=10**12)", "error"),
        ("mean(numbers=[[0]*100000]*100000)", "repeated sequence too long"),
        ("mean(numbers=" + "9" * 5000 + ")", "Error"),
        ("mean(numbers=0x" + "f" * 5000 + ")", "too large to read"),
    ],
)
def test_calculator_bounds_every_numeric_argument(call, error, safety_net):
    env = Environment.create(["MathAPI"], None)
    assert isinstance(env.instances["MathAPI"], MathAPI)
    assert error in env.execute_one(call)


def test_an_environment_executes_a_bounded_number_of_calls():
    env = Environment.create(["MathAPI"], None)
    results = env.execute(["add(a=1, b=2)"] * (MAX_EXECUTED_CALLS + 1))
    assert results[0] == '{"result": 3}'
    assert f"more than {MAX_EXECUTED_CALLS:,} calls" in results[-1]


def test_repetition_budget_is_shared_by_an_environment():
    env = Environment.create(["MathAPI"], None)
    results = env.execute(["sum_values(numbers=[1] * 100000)"] * 11)
    assert results[0] == '{"result": 100000}'
    assert "too large" in results[-1]


def test_agentic_final_message_of_a_50_mb_string_turn_reads_only_its_end(safety_net):
    assert final_message("x" * 50_000_000 + "!", "prompt") == "!"
