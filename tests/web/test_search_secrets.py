"""A search service that echoes the key it was sent: the key is masked before the answer goes
anywhere (the conversation, the model's requests, the cache, results, reports, a recording)."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.testing.fake_web import FakeWeb
from pytest_bfcl.web.access import WebAccess, WebSettings

KEY = "serp-test-key-4f9a8b7c6d5e"


@pytest.fixture
def web(monkeypatch):
    monkeypatch.setenv("SERPAPI_API_KEY", KEY)
    with FakeWeb() as server:
        server.echo_key = True
        yield server


def search(access: WebAccess) -> list:
    services = BackendServices(web=access)
    tools = Environment.create(
        ["WebSearchAPI"], {"WebSearchAPI": {"show_snippet": True}}, None, services
    )
    return tools.execute(["search_engine_query(keywords='tea', max_results=3)"])


def test_an_echoed_key_never_reaches_the_tool_result_or_the_recording(web, tmp_path):
    cassette = tmp_path / "cassette"
    settings = WebSettings(
        mode="record", cassette=cassette, provider="serpapi", search_url=web.search_url,
        allow_private=True,
    )  # fmt: skip
    shown = json.dumps(search(WebAccess(settings)))
    assert "served to api_key=***" in shown and KEY not in shown and KEY[:12] not in shown
    for path in cassette.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text("utf-8", "replace"), path


def test_an_echoed_key_is_masked_in_every_file_of_a_run(pytester, web, data_source, tmp_path):
    outputs = tmp_path / "out"
    result = pytester.runpytest_subprocess(
        f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
        "--bfcl-category=web_search_base", "-k", "web_search_base_1",
        "--bfcl-web-provider=serpapi", f"--bfcl-web-search-url={web.search_url}",
        "--bfcl-web-allow-private", f"--bfcl-results-dir={outputs / 'results'}",
        f"--bfcl-report={outputs / 'report.json'}", f"--bfcl-html={outputs / 'page.html'}",
        f"--junitxml={outputs / 'junit.xml'}", "-p", "no:cacheprovider", timeout=300,
    )  # fmt: skip
    out = result.stdout.str() + result.stderr.str()
    assert web.requests["search"] >= 1, out[-2000:]
    assert KEY not in out
    files = [p for p in outputs.rglob("*") if p.is_file()]
    assert len(files) >= 4
    for path in files:
        assert KEY not in path.read_text("utf-8", "replace"), path
    results = "".join(p.read_text() for p in (outputs / "results").rglob("*.json"))
    assert "***" in results  # the echo is there, masked
