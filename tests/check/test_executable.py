"""Executable evaluation: the match rules, the REST checks, the web modes of the API client
against a local simulated API server (record, replay, keys kept out of the cassette), the
session probe, and end-to-end oracle runs of the executable categories, offline."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.exec_api import ApiClient, ApiRequest, ApiUnavailable
from pytest_bfcl.check.executable import Outcome, exec_summary, match_all, match_result
from pytest_bfcl.check.rest import RestCallError, parse_rest_call, rest_mismatch
from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.dataset.categories import COLLECTIONS, EXECUTABLE, expand_categories
from pytest_bfcl.kinds.exec_probe import probe_executable
from pytest_bfcl.models.base import Generation
from pytest_bfcl.models.oracle import OracleModel
from pytest_bfcl.models.oracle_executable import ORACLE_KNOWN_FAILURES
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.settings import Settings
from pytest_bfcl.testing.exec_api_server import FAKE_KEYS, ApiServer, serve
from pytest_bfcl.web.access import WebAccess, WebSettings
from pytest_bfcl.web.cassette import CassetteMiss

EXEC = ("exec_simple", "exec_multiple", "exec_parallel", "exec_parallel_multiple")


def ok(value: object) -> Outcome:
    return Outcome("f()", value=value)


# -- selection ----------------------------------------------------------------------------------


def test_executable_categories_are_opt_in():
    assert expand_categories("executable") == list(EXECUTABLE)
    for collection in ("all", "all_scoring", "single_turn", "non_live", "python"):
        assert not set(EXECUTABLE) & set(COLLECTIONS[collection])
    assert expand_categories("exec_simple,sql") == ["exec_simple", "sql"]


def test_entries_and_answers_load(dataset):
    sizes = {c: len(dataset.entries(c)) for c in EXECUTABLE}
    assert sizes == {
        "exec_simple": 100, "exec_multiple": 50, "exec_parallel": 50,
        "exec_parallel_multiple": 40, "rest": 70, "sql": 100,
    }  # fmt: skip
    rest = dataset.answers("rest")["rest_0"]
    assert rest.call.startswith("requests.get(url='https://timezone-by-location")
    assert len(dataset.entries("sql")[0].question) == 1  # the flat message list, as one turn


# -- match rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "passes"),
    [(120.0, True), (120.0001, False), (80.0, True), (79.9999, False), (100, True)],
)
def test_real_time_match_is_within_20_percent_both_sides(value, passes):
    assert (match_result(ok(value), 100.0, "real_time_match") is None) is passes


def test_real_time_match_of_negative_and_non_numbers():
    assert match_result(ok(-119.0), -100, "real_time_match") is None
    assert match_result(ok(-121.0), -100, "real_time_match").error_type.endswith(
        "real_time_mismatch"
    )
    assert match_result(ok("100"), 100, "real_time_match") is not None
    assert match_result(ok(True), 1, "real_time_match") is not None
    # Not a number expected: the exact rule applies.
    assert match_result(ok("Apple Inc."), "Apple Inc.", "real_time_match") is None
    assert match_result(ok(10**5000), 1.0, "real_time_match") is not None  # no overflow


def test_exact_match():
    assert match_result(ok([1, 2]), [1, 2], "exact_match") is None
    assert match_result(ok([2, 1]), [1, 2], "exact_match").error_type == "executable_checker:wrong_result"  # fmt: skip
    assert match_result(ok(1.0), 1, "exact_match") is None
    assert match_result(ok(True), 1, "exact_match") is not None
    assert match_result(ok({"a": 1}), {"a": 1}, "exact_match") is None


def test_structural_match_type_length_and_keys():
    rule = "structural_match"
    assert match_result(ok([1.5, 2.4, 6]), [1, 2, 3], rule) is None
    assert match_result(ok(-0.4), 12, rule) is None  # numbers are one type
    assert match_result(ok("12"), 12, rule).error_type == "executable_checker:wrong_type"
    assert match_result(ok([1, 2]), [1, 2, 3], rule).error_type == "executable_checker:wrong_length"
    assert match_result(ok({"a": 0, "b": 1}), {"a": 5, "b": 6}, rule) is None
    missing = match_result(ok({"a": 0}), {"a": 5, "b": 6}, rule)
    extra = match_result(ok({"a": 0, "b": 1, "c": 2}), {"a": 5, "b": 6}, rule)
    assert missing.error_type == extra.error_type == "executable_checker:wrong_keys"
    assert "'b'" in missing.message and "'c'" in extra.message


def test_a_failed_call_never_matches():
    failed = Outcome("f()", error="boom")
    for rule in ("exact_match", "real_time_match", "structural_match"):
        assert match_result(failed, None, rule).error_type == "executable_checker:execution_error"


def test_parallel_matching_is_order_free_and_all_or_nothing():
    expected = [ok(1), ok(2), ok(3)]
    rules = ["exact_match"] * 3
    assert match_all([ok(3), ok(1), ok(2)], expected, rules) is None
    assert match_all([ok(3), ok(1), ok(4)], expected, rules).error_type.endswith("cannot_find_match")  # fmt: skip
    assert match_all([ok(1), ok(2)], expected, rules).error_type.endswith("wrong_count")
    assert match_all([ok(1), ok(1), ok(2)], expected, rules) is not None  # one result, one match


def test_parallel_matching_is_not_greedy():
    # 105 matches both expected results in real time; a greedy pairing would give it to the
    # first and leave 100 nothing; the matching gives 100 to the first instead.
    expected = [ok(100.0), ok(110.0)]
    rules = ["real_time_match", "exact_match"]
    assert match_all([ok(105.0), ok(110.0)], expected, rules) is None
    assert match_all([ok(110.0), ok(100.0)], expected, rules) is None


def test_each_expected_result_keeps_its_own_rule():
    expected = [ok(100.0), ok(100.0)]
    assert match_all([ok(100.0), ok(115.0)], expected, ["exact_match", "real_time_match"]) is None
    assert match_all([ok(115.0), ok(115.0)], expected, ["exact_match", "real_time_match"]) is not None  # fmt: skip


def test_exec_summary_is_the_unweighted_mean_of_the_four():
    scores = {"exec_simple": {"accuracy": 1.0}, "exec_multiple": {"accuracy": 0.5}}
    assert exec_summary(scores) is None
    scores |= {"exec_parallel": {"accuracy": 0.5}, "exec_parallel_multiple": {"accuracy": 0.0}}
    assert exec_summary(scores) == 0.5
    scores["rest"] = {"accuracy": 0.0}  # not part of it
    assert exec_summary(scores) == 0.5
    # The first leaderboard's simple column: Python and REST pooled (100 + 70 entries).
    scores["exec_simple"] = {"accuracy": 1.0, "correct": 100, "total": 100}
    scores["rest"] = {"accuracy": 0.0, "correct": 0, "total": 70}
    assert exec_summary(scores, pool_rest=True) == pytest.approx((100 / 170 + 0.5 + 0.5 + 0) / 4)
    assert exec_summary({k: v for k, v in scores.items() if k != "rest"}, pool_rest=True) is None


def test_probe_run_sends_nothing_without_executable_or_live_web(dataset):
    from pytest_bfcl.kinds.exec_probe import probe_run

    for categories, web in (("simple_python", "live"), ("executable", "off")):
        settings = Settings(model="oracle", categories=categories, web=web)
        assert probe_run(BfclRun(settings, dataset, OracleModel(ScoringOptions()))) == {}


# -- REST ---------------------------------------------------------------------------------------


def test_rest_checks():
    expected = {"Zones": [{"a": 1}], "Safezone": 1.0}
    assert rest_mismatch(200, {"Zones": [], "Safezone": 0}, expected) is None
    assert rest_mismatch(404, expected, expected).error_type.endswith("rest_request_failed")
    assert rest_mismatch(200, [expected], expected).error_type.endswith("rest_wrong_type")
    assert rest_mismatch(200, {"Zones": []}, expected).error_type.endswith("rest_wrong_keys")
    listed = [{"x": 1}, {"x": 2}]
    assert rest_mismatch(200, [{"x": 5}, {"x": 6}], listed) is None
    assert rest_mismatch(200, [{"x": 5}], listed).error_type.endswith("rest_wrong_length")
    assert rest_mismatch(200, [{"x": 5}, {"y": 6}], listed).error_type.endswith("rest_wrong_keys")


@pytest.mark.parametrize(
    "call",
    [
        "requests.post(url='https://x.org')",
        "requests.get(url=os.environ['HOME'])",
        "requests.get(url=__import__('os').getcwd())",
        "requests.get(url='https://x.org', params=dict(a=1))",
        "requests.get(**{'url': 'https://x.org'})",
        "requests.get(url='https://x.org', files={'f': 1})",
        "requests.get(url=1)",
        "requests.get(url='https://x.org', params={'a': {'b': 1}})",
        "requests.get(",
        "requests.get(url='" + "a" * 2_000_000 + "')",
    ],
)
def test_rest_calls_are_read_as_literals_only(call):
    started = time.monotonic()
    with pytest.raises(RestCallError):
        parse_rest_call(call)
    assert time.monotonic() - started < 2


def test_rest_call_with_positional_url():
    request = parse_rest_call("requests.get('https://x.org/a', params={'q': 1}, timeout=5)")
    assert request == ApiRequest("https://x.org/a", {"q": 1}, {})


# -- the API client: web modes against the local server -----------------------------------------


class _Web:
    """The parts of a WebAccess the client reads."""

    def __init__(self, mode: str, cassette: Path | None = None, allow_private: bool = False):
        from pytest_bfcl.web.cassette import Cassette

        self.mode = mode
        self.cassette = Cassette(cassette) if cassette else None
        self.settings = WebSettings(mode="live", allow_private=allow_private)


MOVIE = ApiRequest("http://www.omdbapi.com/", {"t": "Avatar", "apikey": "YOUR-OMDB-API-KEY"})


def test_record_then_replay_without_keys_in_the_cassette(tmp_path):
    server = ApiServer()
    with serve(server) as base:
        recorder = ApiClient(_Web("record", tmp_path), env=FAKE_KEYS, base_url=base)
        live = recorder.get(MOVIE)
    assert live.status == 200 and live.body["Director"] == "A. Director"
    assert server.requests[0]["query"]["apikey"] == [FAKE_KEYS["OMDB_API_KEY"]]  # sent
    text = "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    assert "YOUR-OMDB-API-KEY" in text and FAKE_KEYS["OMDB_API_KEY"] not in text
    replayed = ApiClient(_Web("replay", tmp_path), env={}).get(MOVIE)  # no keys, no server
    assert replayed == live
    with pytest.raises(CassetteMiss):
        ApiClient(_Web("replay", tmp_path), env={}).get(ApiRequest("http://www.omdbapi.com/"))


def test_a_key_written_by_the_model_is_masked_in_the_cassette(tmp_path):
    leaked = ApiRequest("http://www.omdbapi.com/", {"t": "Avatar", "apikey": "real-secret-123"})
    assert leaked.cassette_key()["params"]["apikey"] == "***"
    in_path = ApiRequest("https://v6.exchangerate-api.com/v6/real-secret-123/latest/EUR")
    assert "real-secret" not in in_path.cassette_key()["url"]


def test_unavailable_api_is_an_error_result():
    with pytest.raises(ApiUnavailable, match="web is off"):
        ApiClient(None).get(MOVIE)
    with pytest.raises(ApiUnavailable, match="OMDB_API_KEY"):
        ApiClient(_Web("live"), env={}, base_url="http://127.0.0.1:9").get(MOVIE)
    # Without the operator's override, local addresses are refused like any fetch.
    local = ApiRequest("http://127.0.0.1:9/private")
    with pytest.raises(ApiUnavailable, match="non-public"):
        ApiClient(_Web("live"), env={}, base_url="").get(local)


def test_http_errors_of_a_function_are_error_results(tmp_path):
    from pytest_bfcl.check.executable import exec_environment, run_call

    with serve(ApiServer()) as base:
        os.environ["BFCL_EXEC_API_BASE"] = base
        try:
            env = exec_environment(BackendServices(web=_Web("live", allow_private=True)))
            outcome = run_call(env, "get_movie_director(movie_name='Avatar')")  # no key set
        finally:
            del os.environ["BFCL_EXEC_API_BASE"]
    assert outcome.unavailable and "OMDB_API_KEY" in outcome.error


# -- end to end ---------------------------------------------------------------------------------


def _canned(dataset) -> list[tuple[ApiRequest, object]]:
    """The REST category's stored responses, served for its ground-truth requests."""
    answers = dataset.answers("rest").values()
    return [(parse_rest_call(a.call), json.loads(a.ground_truth)) for a in answers]


@pytest.fixture(scope="module")
def cassette(dataset, tmp_path_factory):
    """A cassette recorded from the local server by an oracle run of every category."""
    directory = tmp_path_factory.mktemp("exec-cassette")
    with pytest.MonkeyPatch.context() as mp, serve(ApiServer(_canned(dataset))) as base:
        mp.setenv("BFCL_EXEC_API_BASE", base)
        for variable, key in FAKE_KEYS.items():
            mp.setenv(variable, key)
        settings = Settings(
            model="oracle", categories="executable", web="record", web_cassette=directory
        )
        run = BfclRun(settings, dataset, OracleModel(ScoringOptions("fc", True)))
        for category in EXECUTABLE:
            for entry in dataset.entries(category):
                generation = run.generate(entry.id)
                assert isinstance(generation, Generation)
                run.score(generation)
    return directory


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_oracle_fails_exactly_its_known_failures_on_replay(dataset, cassette, mode, monkeypatch):
    for variable in FAKE_KEYS:
        monkeypatch.delenv(variable, raising=False)
    settings = Settings(
        model="oracle", mode=mode, categories="executable", web="replay", web_cassette=cassette
    )
    run = BfclRun(settings, dataset, OracleModel(ScoringOptions(mode, mode == "fc")))
    failed = {}
    for category in EXECUTABLE:
        for entry in dataset.entries(category):
            verdict = run.score(run.generate(entry.id))
            if not verdict.valid:
                failed[entry.id] = verdict.error_type
    assert set(failed) == set(ORACLE_KNOWN_FAILURES)


def test_model_answers_are_executed_and_compared(dataset, cassette):
    settings = Settings(
        model="oracle", categories="executable", web="replay", web_cassette=cassette
    )
    run = BfclRun(settings, dataset, OracleModel(ScoringOptions("fc", True)))
    entry = run.entry("exec_parallel_21")  # fibonacci sequences of 10, 20 and 5
    calls = [
        {"get_fibonacci_sequence": '{"n": 5}'},
        {"get_fibonacci_sequence": '{"n": 10}'},
        {"get_fibonacci_sequence": '{"n": 20}'},
    ]
    assert run.score(Generation(id=entry.id, result=calls)).valid  # any order
    wrong = [*calls[:2], {"get_fibonacci_sequence": '{"n": 21}'}]
    verdict = run.score(Generation(id=entry.id, result=wrong))
    assert verdict.error_type == "executable_checker:cannot_find_match"
    assert any("get_fibonacci_sequence(n=21) -> [0, 1" in line for line in verdict.report)
    verdict = run.score(Generation(id=entry.id, result=calls[:2]))
    assert verdict.error_type == "executable_checker:wrong_count"
    text = run.score(Generation(id=entry.id, result="I cannot do that"))
    assert text.error_type == "executable_decoder:decoder_failed"
    hostile = [{"__import__": '{"name": "os"}'}, *calls[:2]]
    assert not run.score(Generation(id=entry.id, result=hostile)).valid


def test_a_replay_of_another_request_is_an_error_of_the_run(dataset, cassette):
    from pytest_bfcl.errors import InfrastructureError

    settings = Settings(
        model="oracle", categories="executable", web="replay", web_cassette=cassette
    )
    run = BfclRun(settings, dataset, OracleModel(ScoringOptions("fc", True)))
    other = [{"get_movie_director": '{"movie_name": "Not Recorded"}'}]
    with pytest.raises(InfrastructureError):
        run.score(Generation(id="exec_simple_94", result=other))


def test_probe_skips_entries_of_failing_apis(dataset, monkeypatch):
    server = ApiServer(_canned(dataset))
    with serve(server) as base:
        monkeypatch.setenv("BFCL_EXEC_API_BASE", base)
        for variable, key in FAKE_KEYS.items():
            monkeypatch.setenv(variable, key)
        monkeypatch.setenv("RAPID_API_KEY", "a-wrong-key-0000")  # RapidAPI refuses us
        web = WebAccess(WebSettings(mode="live", allow_private=True))
        skips = probe_executable(dataset, BackendServices(web=web), EXECUTABLE)
    assert "rest_0" in skips and "timezone-by-location" in skips["rest_0"]
    assert "rest_13" not in skips  # exchangerate-api needs no RapidAPI key
    assert "exec_simple_30" in skips  # COVID figures come from RapidAPI
    assert "get_active_covid_case_by_country" in skips["exec_simple_30"]
    assert "exec_simple_0" not in skips and "exec_simple_94" not in skips
    # A replayed run sends nothing, so it is never probed.
    assert probe_executable(dataset, BackendServices(web=None), EXECUTABLE) == {}


def test_pytest_run_of_the_oracle_offline(pytester, data_source, cassette, monkeypatch):
    for variable in (*FAKE_KEYS, "BFCL_EXEC_API_BASE"):
        monkeypatch.delenv(variable, raising=False)
    started = time.monotonic()
    result = pytester.runpytest(
        "--bfcl-model=oracle",
        "--bfcl-category=executable",
        "--bfcl-web=replay",
        f"--bfcl-web-cassette={cassette}",
        f"--bfcl-data={data_source.data_dir}",
        "-p", "no:cacheprovider", "-p", "no:randomly",
    )  # fmt: skip
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 410 - len(ORACLE_KNOWN_FAILURES)
    assert outcomes.get("failed", 0) + outcomes.get("xfailed", 0) == len(ORACLE_KNOWN_FAILURES)
    assert "error" not in outcomes and "errors" not in outcomes
    assert time.monotonic() - started < 120


HOSTILE_OUTPUTS = [
    ("fc", [{"math_factorial": '{"n": 100000000}'}]),
    ("fc", [{"get_fibonacci_number": '{"n": 1000000000}'}]),
    ("fc", [{"eval": '{"source": "1+1"}'}]),
    ("fc", [{"math_factorial": '{"n": "' + "9" * 100_000 + '"}'}]),
    ("fc", [{"calculate_mean": '{"numbers": [' + ",".join(["1"] * 200_000) + "]}"}]),
    ("fc", [{"math_factorial": '{"n": 3}'}] * 1000),
    ("prompt", "[__import__('os').system('echo hacked')]"),
    ("prompt", "[get_fibonacci_number(n=10**9)]"),
    ("prompt", "[math_factorial(n=" + "9" * 5000 + ")]"),
    ("prompt", "[math_factorial(n=math_factorial(n=math_factorial(n=10)))]"),
    ("prompt", "[estimate_derivative(function='lambda x: __import__(\"os\")', x=1)]"),
    ("prompt", "[calculate_mean(numbers=[1]*10**9)]"),
    ("prompt", "[" + "math_factorial(n=3), " * 5000 + "]"),
    ("prompt", "[" * 10_000),
]


@pytest.mark.parametrize(("mode", "output"), HOSTILE_OUTPUTS, ids=range(len(HOSTILE_OUTPUTS)))
def test_hostile_outputs_fail_in_bounded_time(dataset, mode, output):
    settings = Settings(model="oracle", mode=mode, categories="exec_simple", web="off")
    run = BfclRun(settings, dataset, OracleModel(ScoringOptions(mode, mode == "fc")))
    started = time.monotonic()
    verdict = run.score(Generation(id="exec_simple_64", result=output))  # math_factorial(n=7)
    assert not verdict.valid and verdict.error_type
    assert time.monotonic() - started < 5


def test_a_request_that_cannot_be_sent_is_the_model_failure(dataset):
    from pytest_bfcl.check.rest import evaluate_rest

    answer = dataset.answers("rest")["rest_0"]
    entry = dataset.entry_map("rest")["rest_0"]
    bad = "requests.get(url='https://timezone-by-location.p.rapidapi.com/timezone', headers={'X': 'a\\nb'})"
    with serve(ApiServer()) as base:
        os.environ["BFCL_EXEC_API_BASE"] = base
        try:
            services = BackendServices(web=_Web("live", allow_private=True))
            verdict = evaluate_rest(entry, answer, f"[{bad}]", ScoringOptions("prompt"), services)
        finally:
            del os.environ["BFCL_EXEC_API_BASE"]
    assert not verdict.valid and verdict.error_type == "executable_checker:rest_bad_call"


def test_redirects_are_followed_a_few_times():
    with serve(ApiServer()) as base:
        client = ApiClient(_Web("live"), env={}, base_url=base)
        assert client.get(ApiRequest("https://redirect.example/old")).body == {"moved": True}
        with pytest.raises(ApiUnavailable, match="redirects"):
            client.get(ApiRequest("https://redirect.example/loop"))


def test_preflight_needs_a_recording_to_replay(dataset, cassette, tmp_path):
    from pytest_bfcl.errors import SetupError
    from pytest_bfcl.kinds.exec_probe import preflight_executable

    def run(directory: Path) -> BfclRun:
        settings = Settings(
            model="oracle", categories="exec_simple", web="replay", web_cassette=directory
        )
        return BfclRun(settings, dataset, OracleModel(ScoringOptions()))

    assert preflight_executable(run(cassette)) == {}
    with pytest.raises(SetupError, match="no API answers"):
        preflight_executable(run(tmp_path))


def test_stored_generations_replay(pytester, data_source, cassette, tmp_path):
    base = [
        "--bfcl-category=exec_parallel,rest",
        "--bfcl-web=replay",
        f"--bfcl-web-cassette={cassette}",
        f"--bfcl-data={data_source.data_dir}",
        "-p", "no:cacheprovider", "-p", "no:randomly",
    ]  # fmt: skip
    results = tmp_path / "results"
    first = pytester.runpytest("--bfcl-model=oracle", f"--bfcl-results-dir={results}", *base)
    assert (results / "oracle" / "executable" / "BFCL_v4_rest_result.json").is_file()
    again = pytester.runpytest(f"--bfcl-model=replay:{results / 'oracle'}", *base)
    assert again.parseoutcomes().get("passed") == first.parseoutcomes().get("passed") == 119
