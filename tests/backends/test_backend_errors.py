"""Badly formed calls answered as the leaderboard's backends answer them: the same checks in
the same order, so a value of the wrong type fails with the same Python error. Each expected
text is made here by performing the reference's operation on the value; the exhaustive
comparison with the official executor is in tests/conformance/test_reference_backend_errors.py."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.conformance.backend_errors import (
    UNKNOWN_ARGUMENT,
    WRONG_VALUES,
    ground_truth_cases,
    method_calls,
    our_answers,
    probe_cases,
    scenario_configs,
)

BAD = [7, 2.5, True, None]


def _error(operation) -> str:
    """The answer to a call whose backend fails in ``operation``."""
    try:
        operation()
    except Exception as exc:
        return f"Error during execution: {exc}"
    raise AssertionError("the operation did not fail")


def _fs(**contents: Any) -> Environment:
    root = {"r": {"type": "directory", "contents": contents}}
    return Environment.create(["GorillaFileSystem"], {"GorillaFileSystem": {"root": root}})


def _file(text: str) -> dict[str, str]:
    return {"type": "file", "content": text}


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("call", ["mkdir(dir_name={})", "touch(file_name={})", "cat(file_name={})"])
def test_a_name_that_is_no_text_fails_on_the_invalid_character_check(call, value):
    # the reference looks for each invalid character in the name: ``'|' in name``
    expected = _error(lambda: "|" in value)
    assert _fs().execute_one(call.format(value)) == expected


@pytest.mark.parametrize("value", [7, 2.5, True, [1], {"k": 1}])
def test_a_path_that_is_no_text_fails_where_the_reference_strips_it(value):
    assert _fs().execute_one(f"find(path={value!r})") == _error(lambda: value.strip("/"))


def test_a_line_count_that_is_no_number_fails_on_the_reference_comparison():
    env = _fs(**{"a.txt": _file("x\ny")})
    assert env.execute_one("tail(file_name='a.txt', lines='3')") == _error(lambda: "3" > 2)


def test_diff_checks_the_first_name_before_looking_at_the_second():
    env = _fs(**{"a.txt": _file("x")})
    assert env.execute_one("diff(file_name1='b.txt', file_name2=[1])") == (
        '{"error": "diff: b.txt or [1]: No such file or directory"}'
    )
    assert env.execute_one("diff(file_name1='a.txt', file_name2=[1])") == _error(
        lambda: [1] in {"a.txt": 1}
    )


@pytest.mark.parametrize("value", [7, "zz", [1, "x"], None])
def test_ticket_updates_that_are_no_mapping_fail_on_keys(value):
    config = {"TicketAPI": {"ticket_queue": [{"id": 1, "title": "t", "status": "open"}]}}
    env = Environment.create(["TicketAPI"], config)
    expected = _error(lambda: value.keys())
    assert env.execute_one(f"edit_ticket(ticket_id=1, updates={value!r})") == expected


@pytest.mark.parametrize("value", ["zz", [1], None])
def test_price_bounds_are_compared_in_the_reference_order(value):
    env = Environment.create(["TradingBot"], {"TradingBot": {}})
    call = f"filter_stocks_by_price(stocks=['AAPL'], min_price={value!r}, max_price=1.0)"
    price = env.instances["TradingBot"].stocks["AAPL"]["price"]  # type: ignore[attr-defined]
    assert env.execute_one(call) == _error(lambda: price >= value)


@pytest.mark.parametrize("value", [[1], {"k": 1}])
def test_lookups_by_a_chain_of_comparisons_take_any_value(value):
    vehicle = Environment.create(["VehicleControlAPI"], {"VehicleControlAPI": {}})
    assert vehicle.execute_one(f"get_zipcode_based_on_city(city={value!r})") == (
        '{"zipcode": "00000"}'
    )
    travel = Environment.create(["TravelAPI"], {"TravelAPI": {}})
    call = f"get_flight_cost(travel_from='RMS', travel_to='SBK', travel_date='2024-11-10', travel_class={value!r})"
    assert travel.execute_one(call) == (
        "Error during execution: Invalid travel class. Options are: economy, business, first."
    )


def test_a_precision_that_is_no_integer_is_the_calculators_error_result():
    env = Environment.create(["MathAPI"], {})
    assert env.execute_one("square_root(number=1.0, precision=None)") == (
        '{"error": "Input must be a number or computation resulted in an invalid operation"}'
    )


def test_a_tweet_keeps_tags_given_as_none():
    config = {"TwitterAPI": {"username": "u", "password": "p", "authenticated": True}}
    env = Environment.create(["TwitterAPI"], config)
    assert '"tags": null' in env.execute_one("post_tweet(content='x', tags=None)")
    assert '"tags": []' in env.execute_one("post_tweet(content='y')")


def test_missing_and_unknown_arguments_fail_as_python_says_for_the_reference_class():
    env = _fs()
    assert env.execute_one("cd()") == (
        "Error during execution: GorillaFileSystem.cd() missing 1 required positional "
        "argument: 'folder'"
    )
    assert env.execute_one(f"cd(folder='r', {UNKNOWN_ARGUMENT}=1)") == (
        f"Error during execution: GorillaFileSystem.cd() got an unexpected keyword argument "
        f"'{UNKNOWN_ARGUMENT}'"
    )


@pytest.mark.parametrize(
    ("backend", "call", "reference_class"),
    [
        ("MemoryAPI_kv", "core_memory_retrieve()", "MemoryAPI_kv"),
        ("MemoryAPI_rec_sum", "memory_append()", "MemoryAPI_rec_sum"),
    ],
)
def test_memory_functions_carry_the_reference_class_name_in_argument_errors(
    backend, call, reference_class
):
    env = Environment.create([backend], {backend: {"snapshot": None}})
    name = call.removesuffix("()")
    assert env.execute_one(call).startswith(
        f"Error during execution: {reference_class}.{name}() missing 1 required positional"
    )


# -- the comparison's cases ---------------------------------------------------------------------


def test_every_function_gets_missing_unknown_and_wrongly_typed_calls():
    calls = method_calls("GorillaFileSystem", "tail")
    assert calls[0] == "tail()"
    assert calls[1] == f"tail(file_name='a', {UNKNOWN_ARGUMENT}=1)"
    wrong_lines = [c for c in calls if "lines=" in c]
    assert len(wrong_lines) == len(WRONG_VALUES) - 1  # every type but int
    assert "tail(file_name='a', lines='zz')" in wrong_lines


def test_the_benchmarks_own_calls_are_varied_on_their_scenarios(dataset):
    entries = dataset.entries("multi_turn_base")[:20]
    cases = ground_truth_cases(entries, dataset.answers("multi_turn_base"), per_method=1)
    assert cases and all(case.config for case in cases)
    assert any(UNKNOWN_ARGUMENT in case.call for case in cases)
    configs = scenario_configs(dataset.entries("multi_turn_base"))
    probed = probe_cases(configs)
    assert {case.backend for case in probed} == set(configs)
    # each on a fresh instance: the same call answers the same, whatever ran before
    answers = our_answers(probed[:50] + probed[:50])
    assert answers[:50] == answers[50:]
