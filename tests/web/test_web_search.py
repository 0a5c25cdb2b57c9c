"""The web-search tools: providers, bounded fetching, the three page views, cassettes recorded
and replayed, replay misses, and simulated failures."""

from __future__ import annotations

import ast
import socket
import threading

import pytest

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.errors import ToolUnavailable
from pytest_bfcl.testing.fake_web import FakeWeb
from pytest_bfcl.web.access import WebAccess, WebConfigError, WebSettings
from pytest_bfcl.web.cassette import CassetteMiss
from pytest_bfcl.web.fetch import FetchError, check_address, fetch_page
from pytest_bfcl.web.providers import (
    DuckDuckGoProvider,
    RateLimited,
    SearchError,
    with_rate_limit_retries,
)


@pytest.fixture
def web():
    with FakeWeb() as server:
        yield server


def tools(access: WebAccess | None, snippets: bool = True, templates=()) -> Environment:
    services = BackendServices(web=access, fetch_error_templates=tuple(templates))
    return Environment.create(
        ["WebSearchAPI"], {"WebSearchAPI": {"show_snippet": snippets}}, None, services
    )


def live(web: FakeWeb, **extra) -> WebAccess:
    return WebAccess(
        WebSettings(provider="serpapi", search_url=web.search_url, allow_private=True, **extra)
    )


def test_search_results_with_and_without_snippets(web):
    env = tools(live(web))
    hits = ast.literal_eval(env.execute_one("search_engine_query(keywords='tea', max_results=2)"))
    assert hits == [
        {
            "title": "Result 0 for tea",
            "href": f"{web.base}/page/tea/0",
            "body": "Snippet 0 about tea",
        },
        {
            "title": "Result 1 for tea",
            "href": f"{web.base}/page/tea/1",
            "body": "Snippet 1 about tea",
        },
    ]
    bare = ast.literal_eval(
        tools(live(web), snippets=False).execute_one("search_engine_query(keywords='tea')")
    )
    assert len(bare) == 3 and all(set(hit) == {"title", "href"} for hit in bare)


@pytest.mark.extra("web")
def test_fetch_modes(web):
    env = tools(live(web))
    url = f"{web.base}/page/tea/0"
    raw = env.instances["WebSearchAPI"].fetch_url_content(url)["content"]
    assert raw.startswith("<html>") and "<script>" in raw
    text = env.instances["WebSearchAPI"].fetch_url_content(url, mode="truncate")["content"]
    assert text.splitlines() == ["tea/0", "tea/0", "Notes about", "tea/0", ".", "Second paragraph."]
    markdown = env.instances["WebSearchAPI"].fetch_url_content(url, mode="markdown")["content"]
    assert "# tea/0" in markdown and "**tea/0**" in markdown
    odd = env.instances["WebSearchAPI"].fetch_url_content(url, mode="pdf")
    assert odd == {"error": f"An error occurred while fetching {url}: Unsupported mode: pdf"}


def test_fetch_errors_are_results_and_bad_urls_raise(web):
    env = tools(live(web))
    missing = env.instances["WebSearchAPI"].fetch_url_content(f"{web.base}/nothing")
    assert missing["error"].startswith(f"An error occurred while fetching {web.base}/nothing: 404")
    assert env.execute_one("fetch_url_content(url='file:///etc/passwd')") == (
        "Error during execution: Invalid URL: file:///etc/passwd"
    )


def test_fetching_refuses_private_addresses_unless_allowed(web):
    with pytest.raises(FetchError, match=r"non-public address 127\.0\.0\.1"):
        fetch_page(f"{web.base}/page/x/0")
    with pytest.raises(FetchError, match="non-public address"):
        check_address("http://localhost:9/admin", allow_private=False)
    with pytest.raises(FetchError, match="only http and https"):
        check_address("ftp://example.com/", allow_private=True)
    assert fetch_page(f"{web.base}/page/x/0", allow_private=True).status == 200


def test_every_redirect_hop_is_checked_and_pages_are_bounded(web, monkeypatch):
    seen = []
    real = check_address

    def record(url, allow_private):
        seen.append(url)
        real(url, allow_private)

    monkeypatch.setattr("pytest_bfcl.web.fetch.check_address", record)
    with pytest.raises(FetchError):  # localhost:80 answers nothing here, but it was checked
        fetch_page(f"{web.base}/redirect-home", allow_private=True, timeout=2)
    assert seen == [f"{web.base}/redirect-home", "http://localhost/admin"]
    with pytest.raises(FetchError, match="larger than 1000000 bytes"):
        fetch_page(f"{web.base}/big", allow_private=True, max_bytes=1_000_000)


def test_a_dripping_page_ends_at_the_fetch_deadline(web):
    outcome: list = []

    def fetch() -> None:
        try:
            fetch_page(f"{web.base}/drip", allow_private=True, timeout=2)
        except FetchError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=fetch, daemon=True)
    worker.start()
    worker.join(60)  # a safety net only
    assert outcome and "did not finish within 2 s" in str(outcome[0])
    assert outcome[0].network


def test_the_connection_goes_to_the_checked_address(web, monkeypatch):
    """DNS rebinding: the name resolves to a public address for the check, then to a private
    one. The connection resolves once more, checks, and connects only to what it checked."""
    real = socket.getaddrinfo
    answers = iter(["93.184.216.34"])

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.example":
            return real(host, port, *args, **kwargs)
        address = next(answers, "127.0.0.1")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    port = web.server.server_address[1]
    with pytest.raises(FetchError, match=r"non-public address 127\.0\.0\.1"):
        fetch_page(f"http://rebind.example:{port}/page/x/0")
    assert web.requests["page"] == 0


def test_each_entry_counts_its_tool_failures(web):
    access = live(web)
    env = tools(access)
    backend = env.instances["WebSearchAPI"]
    backend.fetch_url_content(f"{web.base}/nothing")
    backend.fetch_url_content(f"{web.base}/page/tea/0")
    backend.search_engine_query("tea")
    assert backend.tool_failures == {"search": 0, "fetch": 1}
    assert "tool_failures" not in backend._state()  # not part of the compared state
    failing = tools(WebAccess(WebSettings(provider="serpapi", search_url=f"{web.base}/nothing")))
    failing.instances["WebSearchAPI"].search_engine_query("tea")
    assert failing.instances["WebSearchAPI"].tool_failures == {"search": 1, "fetch": 0}
    assert tools(access).instances["WebSearchAPI"].tool_failures == {"search": 0, "fetch": 0}


@pytest.mark.extra("web")
def test_cassette_round_trip_replays_byte_for_byte(web, tmp_path):
    cassette = tmp_path / "cassette"
    recording = WebAccess(
        WebSettings(
            mode="record",
            cassette=cassette,
            provider="serpapi",
            search_url=web.search_url,
            allow_private=True,
        )
    )
    calls = [
        "search_engine_query(keywords='capital of France', max_results=3)",
        f"fetch_url_content(url='{web.base}/page/capital/1', mode='truncate')",
        f"fetch_url_content(url='{web.base}/page/capital/1', mode='raw')",
        f"fetch_url_content(url='{web.base}/missing')",
    ]
    first = tools(recording).execute(calls)
    assert recording.cassette is not None
    assert recording.cassette.count("search") == 1 and recording.cassette.count("fetch") == 2
    before = dict(web.requests)
    replaying = WebAccess(WebSettings(mode="replay", cassette=cassette))
    assert tools(replaying).execute(calls) == first  # the recorded error too
    assert dict(web.requests) == before  # nothing reached the server


def test_a_replay_miss_names_the_query_or_url(tmp_path):
    (tmp_path / "c").mkdir()
    env = tools(WebAccess(WebSettings(mode="replay", cassette=tmp_path / "c")))
    with pytest.raises(CassetteMiss, match=r"query 'unseen words'.*--bfcl-web=record"):
        env.execute_one("search_engine_query(keywords='unseen words')")
    with pytest.raises(CassetteMiss, match=r"URL 'https://example\.org/x'"):
        env.execute_one("fetch_url_content(url='https://example.org/x')")


def test_web_settings_are_checked(tmp_path):
    with pytest.raises(WebConfigError, match="needs a cassette"):
        WebAccess(WebSettings(mode="replay"))
    with pytest.raises(WebConfigError, match="does not exist"):
        WebAccess(WebSettings(mode="replay", cassette=tmp_path / "nope"))
    with pytest.raises(WebConfigError, match="between 0 and 1"):
        WebAccess(WebSettings(failure_rate=2))


def test_tools_without_web_access_stop_the_entry():
    with pytest.raises(ToolUnavailable, match="--bfcl-web=off"):
        tools(None).execute_one("search_engine_query(keywords='x')")


def test_simulated_failures_are_seeded_and_use_the_benchmark_wording(web, texts):
    access = live(web, failure_rate=0.5)
    urls = [f"{web.base}/page/a/{i}" for i in range(12)]
    runs = []
    for _ in range(2):
        backend = tools(access, templates=texts.fetch_error_templates).instances["WebSearchAPI"]
        runs.append([backend.fetch_url_content(u) for u in urls])
    assert runs[0] == runs[1]  # the same entry sees the same failures every run
    failures = [r["error"] for r in runs[0] if "error" in r]
    assert 0 < len(failures) < len(urls)
    assert all(any(w in f for w in ("Error", "timed out", "Max retries")) for f in failures)
    assert any(f"{web.base}" in f or "127.0.0.1" in f for f in failures)


def test_search_failures_are_results(web):
    access = WebAccess(WebSettings(provider="serpapi", search_url=f"{web.base}/nothing"))
    env = tools(access)
    assert env.instances["WebSearchAPI"].search_engine_query("x") == {
        "error": "Failed to retrieve the search results from server. Please try again later."
    }


def test_rate_limits_are_retried_a_bounded_number_of_times():
    attempts, sleeps = [], []

    def limited():
        attempts.append(1)
        raise RateLimited("429 Too Many Requests")

    with pytest.raises(RateLimited):
        with_rate_limit_retries(limited, retries=3, sleep=sleeps.append)
    assert len(attempts) == 4 and len(sleeps) == 3
    assert sleeps[0] >= 2 and sleeps[2] >= 8  # doubling back-off with jitter

    outcomes = iter([RateLimited("429"), [{"title": "t", "link": "l", "snippet": "s"}]])

    def flaky():
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert with_rate_limit_retries(flaky, sleep=lambda s: None)[0]["title"] == "t"


@pytest.mark.extra("web")
def test_duckduckgo_hits_are_mapped_to_the_common_shape(monkeypatch):

    class FakeDDGS:
        def text(self, query, region, max_results):
            assert (query, region, max_results) == ("tea", "wt-wt", 2)
            return [{"title": "T", "href": "https://t.example", "body": "B"}]

    provider = DuckDuckGoProvider()
    monkeypatch.setattr(provider, "_client", FakeDDGS)
    assert provider.search("tea", 2, "wt-wt") == [
        {"title": "T", "link": "https://t.example", "snippet": "B"}
    ]

    class Broken:
        def text(self, *args, **kwargs):
            raise OSError("no route to host")

    monkeypatch.setattr(provider, "_client", Broken)
    with pytest.raises(SearchError, match="no route to host"):
        provider.search("tea", 2, "wt-wt")


def test_the_failure_rate_is_the_share_of_fetches_that_fail():
    from pytest_bfcl.backends.web_search import simulated_failure

    # each entry's first fetch (call 1) of its own page: the case the rate must hold for
    urls = [f"https://example.org/entry/{i}" for i in range(4000)]
    for rate in (0.05, 0.1, 0.2, 0.3, 0.5):
        failed = sum(simulated_failure(u, 1, rate) for u in urls)
        assert abs(failed / len(urls) - rate) < 0.02, (rate, failed)
    assert not any(simulated_failure(u, 1, 0.0) for u in urls)
    assert all(simulated_failure(u, 1, 1.0) for u in urls)
    # the same call fails on every rerun; another call of the same URL decides anew
    assert [simulated_failure(u, 1, 0.3) for u in urls] == [
        simulated_failure(u, 1, 0.3) for u in urls
    ]
    assert [simulated_failure(u, 1, 0.3) for u in urls] != [
        simulated_failure(u, 2, 0.3) for u in urls
    ]


def test_entries_do_not_all_fail_or_pass_their_first_fetch_together(web):
    from pytest_bfcl.backends.web_search import simulated_failure

    access = live(web, failure_rate=0.2)
    urls = [f"{web.base}/page/q{i}/0" for i in range(100)]
    first_fetches = [tools(access).instances["WebSearchAPI"].fetch_url_content(u) for u in urls]
    # The draw hangs on the URL, whose port is the fake web's own: which entries fail changes
    # from run to run, and those the hash picks are the ones that failed.
    drawn = [i for i, url in enumerate(urls) if simulated_failure(url, 1, 0.2)]
    assert 5 <= len(drawn) <= 40  # about a fifth, not none or all (outside: p < 1e-5)
    assert all("error" in first_fetches[i] for i in drawn)
    # the others reached the page (a fetch that timed out on a loaded machine is not drawn)
    reached = [i for i in range(100) if i not in drawn and "content" in first_fetches[i]]
    assert len(reached) >= (100 - len(drawn)) // 2
