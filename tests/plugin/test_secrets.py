"""No secret at rest: what a secret looks like (pytest_bfcl/redact.py), and an end-to-end run
with a sentinel key in the serving flags, the key variable and the endpoint URL, after which no
file the run wrote, nor its output, holds the sentinel."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

from pytest_bfcl.redact import (
    MASK,
    forget_registered_secrets,
    redact_args,
    redact_data,
    redact_text,
    register_secret,
    register_secret_env,
)
from pytest_bfcl.servers.vllm_server import ServerStartError, VllmServer
from pytest_bfcl.settings import build_settings

STAND_IN = f"{sys.executable} -m pytest_bfcl.testing.stand_in_vllm"
SENTINEL = "SENTINEL-SECRET-7f3a9c"
NEEDLE = "7f3a9c"  # in every sentinel variant below


@pytest.fixture(autouse=True)
def fresh_registry():
    forget_registered_secrets()
    yield
    forget_registered_secrets()


# -- what a secret looks like -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"$ vllm serve m --api-key {SENTINEL} --port 8000", "--api-key *** --port 8000"),
        (f"vllm serve m --api-key={SENTINEL}", "--api-key=***"),
        (f"vllm serve m --hf-token '{SENTINEL} x' --seed 1", "--hf-token '***' --seed 1"),
        (f"--port 1 --auth-token {SENTINEL}", "--auth-token ***"),
        (
            f"flags=['--tool-call-parser', 'hermes', '--api-key', '{SENTINEL}']",
            "'--api-key', '***'",
        ),
        (f'["--client-secret", "{SENTINEL}"]', '["--client-secret", "***"]'),
        (f"Authorization: Bearer {SENTINEL}", "Authorization: Bearer ***"),
        (f'{{"authorization": "Basic {SENTINEL}"}}', '"authorization": "Basic ***'),
        (f"x-api-key: {SENTINEL}", "x-api-key: ***"),
        (f"http://user:{SENTINEL}@gateway:8000/v1", "http://user:***@gateway:8000/v1"),
        (f"http://gateway/v1?api_key={SENTINEL}&region=eu", "?api_key=***&region=eu"),
        (f"(http://gateway/v1?x=1&token={SENTINEL})", "&token=***)"),
    ],
)
def test_secrets_are_masked_by_their_place(text, masked):
    redacted = redact_text(text)
    assert NEEDLE not in redacted
    assert masked in redacted


@pytest.mark.parametrize(
    "text",
    [
        "vllm serve m --tokenizer mistral-tok --max-num-batched-tokens 8192",
        "--api-key-env OPENAI_API_KEY --tool-call-parser hermes",
        "http://127.0.0.1:8000/v1?page=2",
        "--enable-auth --port 8000",  # a switch: the next flag is not its value
        "{'api_key': 'abc'} is a model's argument, not ours",
        "it is not signed, and --bfcl-baseline-key asks for a signed baseline",
        "--bfcl-baseline-key names $BFCL_KEY, which is not set",
        "--bfcl-baseline-key=BFCL_BASELINE_KEY --bfcl-gate=strict",
        "set --api-key or --hf-token when the server needs one",
    ],
)
def test_what_is_not_a_secret_is_left_alone(text):
    assert redact_text(text) == text


def test_values_of_key_variables_are_masked_anywhere(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", f"hf-{SENTINEL}")
    monkeypatch.setenv("SERPAPI_API_KEY", f"serp-{SENTINEL}")
    monkeypatch.setenv("MY_GATEWAY", f"gw-{SENTINEL}")
    monkeypatch.setenv("SHORT_TOKEN", "abc")
    text = f"loading with hf-{SENTINEL}; search serp-{SENTINEL}; gw-{SENTINEL}; abc"
    assert redact_text(text) == f"loading with {MASK}; search {MASK}; gw-{SENTINEL}; abc"
    register_secret_env("MY_GATEWAY")  # what --bfcl-api-key-env names, whatever its name
    assert redact_text(text) == f"loading with {MASK}; search {MASK}; {MASK}; abc"


def test_a_key_variable_set_or_changed_between_two_texts_is_masked_in_the_second(monkeypatch):
    # The environment's secrets are remembered between calls; a change must still be seen.
    # (the new value starts differently: a value's first characters mask what follows them)
    text = f"one hf-{SENTINEL} two new-hf-{SENTINEL}"
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert redact_text(text) == text
    monkeypatch.setenv("HF_TOKEN", f"hf-{SENTINEL}")
    assert redact_text(text) == f"one {MASK} two new-{MASK}"
    monkeypatch.setenv("HF_TOKEN", f"new-hf-{SENTINEL}")
    assert redact_text(text) == f"one hf-{SENTINEL} two {MASK}"
    monkeypatch.delenv("HF_TOKEN")
    assert redact_text(text) == text


def test_registered_values_are_masked_and_short_ones_ignored():
    register_secret(SENTINEL)
    register_secret("a")
    assert redact_text(f"a key {SENTINEL}!") == f"a key {MASK}!"


def test_data_is_redacted_recursively():
    register_secret(SENTINEL)
    data = {
        "model": "vllm:acme/m",
        "api_key": "whatever-it-is",
        "api_key_env": "OPENAI_API_KEY",
        "key": "a-cache-key-not-a-secret",
        "serving_args": ["--tool-call-parser", "hermes", "--api-key", "k3y-value-xyz"],
        "nested": [{"note": f"given {SENTINEL}"}, ("--hf-token=tok-value-1234", 3)],
        "count": 3,
    }
    assert redact_data(data) == {
        "model": "vllm:acme/m",
        "api_key": MASK,
        "api_key_env": "OPENAI_API_KEY",
        "key": "a-cache-key-not-a-secret",
        "serving_args": ["--tool-call-parser", "hermes", "--api-key", MASK],
        "nested": [{"note": f"given {MASK}"}, ("--hf-token=***", 3)],
        "count": 3,
    }
    assert redact_args(["--api-key", "k", "--port", "1"]) == ["--api-key", MASK, "--port", "1"]


def test_build_settings_registers_the_run_secrets(monkeypatch):
    monkeypatch.setenv("MY_GATEWAY", f"env-{SENTINEL}")
    build_settings(
        {
            "model": "my-model",
            "api_key_env": "MY_GATEWAY",
            "vllm_args": f"--tool-call-parser hermes --api-key args-{SENTINEL}",
            "base_urls": [f"http://127.0.0.1:1/v1?token=q-{SENTINEL}"],
            "web_search_url": f"http://u:url-{SENTINEL}@127.0.0.1:1/search",
        }
    )
    for value in (f"env-{SENTINEL}", f"args-{SENTINEL}", f"url-{SENTINEL}", f"q-{SENTINEL}"):
        assert redact_text(f"seen: {value}.") == f"seen: {MASK}."


def test_a_server_log_and_start_failure_hold_no_secret(tmp_path):
    script = (
        "import sys; print('args', sys.argv[1:]); "
        f"print('downloading with hf-{SENTINEL}'); sys.exit(1)"
    )
    register_secret(f"hf-{SENTINEL}")
    command = [sys.executable, "-c", script, "--api-key", f"args-{SENTINEL}"]
    log = tmp_path / "vllm.log"
    server = VllmServer(command, 1, log, startup_timeout=30)
    with pytest.raises(ServerStartError) as info:
        server.start()
    text = log.read_text()
    assert "downloading with ***" in text  # the server's own output went through the mask
    assert "'--api-key', '***'" in text and "--api-key '***'" in text  # its flags and ours
    assert NEEDLE not in text and NEEDLE not in str(info.value)
    assert "downloading with ***" in str(info.value)


# -- end to end -----------------------------------------------------------------------------------


def encoded_forms(secret: str) -> list[str]:
    """The secret's base64 as it appears inside any longer encoded text (three alignments,
    standard and URL-safe), computed here independently of the redactor's own."""
    forms = []
    for pad in ("", "a", "ab"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode((pad + secret).encode()).decode()
            skip = {0: 0, 1: 2, 2: 3}[len(pad)]  # characters mixing the padding's bits
            forms.append(text[skip : skip + 12])
    return forms


# What the end-to-end runs use as keys, and what a leak of them would look like.
KEYS = [f"env-{SENTINEL}", f"url-{SENTINEL}", f"query-{SENTINEL}"]
LEAK_FORMS = [NEEDLE] + [form for key in KEYS for form in encoded_forms(key)]


def leaks(root: Path, *outputs: str) -> list[str]:
    """Every file under ``root`` (and every output) that holds the sentinel, its base64 or
    its base64 inside a Basic header."""
    found = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*"))
        if path.is_file() and any(form.encode() in path.read_bytes() for form in LEAK_FORMS)
    ]
    return found + [
        f"<output {i}>" for i, text in enumerate(outputs) if any(f in text for f in LEAK_FORMS)
    ]


def written_everywhere(out: Path) -> list[str]:
    return [
        f"--bfcl-report={out / 'report.json'}",
        f"--bfcl-save-baseline={out / 'baseline.json'}",
        f"--bfcl-results-dir={out / 'results'}",
        f"--bfcl-csv={out / 'csv'}",
        f"--bfcl-chart={out / 'chart.svg'}",
        f"--bfcl-cache-dir={out / 'cache'}",
        f"--junitxml={out / 'junit.xml'}",
        "-p",
        "no:cacheprovider",
        "-v",
        "-rA",
    ]


def check_written(out: Path) -> None:
    """The run wrote what it should, so the search for the sentinel was not in vain."""
    for name in ("report.json", "baseline.json", "chart.svg", "junit.xml"):
        assert (out / name).is_file(), name
    for name in ("results", "csv", "cache"):
        assert any((out / name).rglob("*.*")), name


def test_no_secret_at_rest_after_a_vllm_run(pytester, monkeypatch):
    out = pytester.path / "out"
    monkeypatch.setenv("STANDIN_CATEGORIES", "live_parallel")
    monkeypatch.setenv("MY_GATEWAY", f"env-{SENTINEL}")
    monkeypatch.setenv("HF_TOKEN", f"hf-{SENTINEL}")
    monkeypatch.setenv("STANDIN_ECHO", f"fetching weights with hf-{SENTINEL}")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(out / "summary.md"))
    monkeypatch.delenv("PYTEST_BFCL_VLLM_URL", raising=False)
    result = pytester.runpytest_subprocess(
        "--bfcl-model=vllm:acme/tool-model-7b",
        f"--bfcl-vllm-exe={STAND_IN}",
        f"--bfcl-vllm-args=--tool-call-parser hermes --api-key args-{SENTINEL} "
        f"--hf-token=flag-{SENTINEL}",
        f"--bfcl-vllm-log={out / 'vllm.log'}",
        f"--bfcl-model-identity=step-4000 --api-key identity-{SENTINEL}",
        "--bfcl-api-key-env=MY_GATEWAY",
        "--bfcl-category=live_parallel",
        *written_everywhere(out),
    )
    result.assert_outcomes(passed=16)
    check_written(out)
    log = (out / "vllm.log").read_text()
    assert "--api-key '***'" in log and "fetching weights with ***" in log
    assert '"serving_args"' in (out / "report.json").read_text()
    assert leaks(pytester.path, result.stdout.str(), result.stderr.str()) == []


def test_the_encoded_forms_searched_for_are_those_of_a_real_basic_header():
    header = base64.b64encode(f"bench:url-{SENTINEL}".encode()).decode()
    assert any(form in header for form in encoded_forms(f"url-{SENTINEL}"))


@pytest.mark.parametrize("user", ["", "u", "us", "bench", "a-longer-user"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_key_encoded_in_base64_is_masked(user, encode):
    register_secret(f"env-{SENTINEL}")
    for plain in (f"env-{SENTINEL}", f"{user}:env-{SENTINEL}"):
        text = f"the server saw {encode(plain.encode()).decode()} and said no"
        redacted = redact_text(text)
        assert MASK in redacted
        assert not any(form in redacted for form in encoded_forms(f"env-{SENTINEL}"))


def test_a_key_quoted_cut_short_is_masked_with_what_follows():
    register_secret(f"env-{SENTINEL}")
    for quoted in (f"env-{SENTINEL}"[:12], f"env-{SENTINEL}"[:16], f"env-{SENTINEL}"[:-1]):
        assert redact_text(f"key {quoted}... is unknown") == f"key {MASK} is unknown"
    assert redact_text("key env-SENT is short") == "key env-SENT is short"  # 8 chars: not enough


@pytest.mark.parametrize(
    "url",
    [
        f"http://bench:url-{SENTINEL}@127.0.0.1:1/v1",
        f"http://url-{SENTINEL}@127.0.0.1:1/v1",
        "https://bench:@127.0.0.1/v1",
    ],
)
def test_credentials_in_a_base_url_are_refused_with_where_the_key_belongs(url):
    with pytest.raises(ValueError) as raised:
        build_settings({"model": "m", "base_urls": [url]})
    message = str(raised.value)
    assert "--bfcl-base-url http://***@127.0.0.1" in message or "https://***@" in message
    assert "$OPENAI_API_KEY" in message and "--bfcl-api-key-env" in message
    assert "\n" not in message and NEEDLE not in message and "bench" not in message


def test_credentials_in_openai_base_url_are_refused(monkeypatch, texts):
    from pytest_bfcl.check.single_turn import ScoringOptions
    from pytest_bfcl.errors import SetupError
    from pytest_bfcl.models.openai_chat import EndpointSettings, OpenAIChatModel

    monkeypatch.setenv("OPENAI_BASE_URL", f"http://bench:url-{SENTINEL}@127.0.0.1:1/v1")
    with pytest.raises(SetupError) as raised:
        OpenAIChatModel(EndpointSettings(model="m"), ScoringOptions("fc", True), texts)
    assert "$OPENAI_BASE_URL http://***@127.0.0.1:1/v1 holds credentials" in str(raised.value)
    assert NEEDLE not in str(raised.value)


def test_a_base_url_with_credentials_stops_the_run_before_any_request(
    pytester, monkeypatch, dataset
):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    out = pytester.path / "out"
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            "--bfcl-base-url=" + fake.base_url.replace("//", f"//bench:url-{SENTINEL}@"),
            "--bfcl-category=live_parallel",
            *written_everywhere(out),
        )
        assert fake.total_requests() == 0 and fake.authorizations == []
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("holds credentials") == 1
    assert leaks(pytester.path, result.stdout.str(), result.stderr.str()) == []


def test_a_server_quoting_the_key_encoded_or_cut_short_leaks_nothing(
    pytester, monkeypatch, dataset
):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    out = pytester.path / "out"
    monkeypatch.setenv("OPENAI_API_KEY", f"env-{SENTINEL}")
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        fake.faults = {"live_parallel_1-0-1": ["echo_auth"]}
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={fake.base_url}",
            "--bfcl-category=live_parallel",
            "--bfcl-retries=0",
            f"--bfcl-html={out / 'report.html'}",
            *written_everywhere(out),
        )
    assert result.parseoutcomes().get("errors") == 1  # the refusal was reported
    assert "refused credentials QmVhcmVyIG***; key *** is unknown" in result.stdout.str()
    assert leaks(pytester.path, result.stdout.str(), result.stderr.str()) == []


@pytest.mark.parametrize(
    "secret_in_url",
    [
        pytest.param(lambda url: f"{url}?api_key=query-{SENTINEL}", id="query"),
    ],
)
def test_no_secret_at_rest_after_an_endpoint_run(pytester, monkeypatch, dataset, secret_in_url):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    out = pytester.path / "out"
    monkeypatch.setenv("OPENAI_API_KEY", f"env-{SENTINEL}")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(out / "summary.md"))
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={secret_in_url(fake.base_url)}",
            "--bfcl-category=live_parallel",
            "--bfcl-retries=0",
            *written_everywhere(out),
        )
    # a server that cannot take a query in its base URL fails the run: its message counts too
    if result.ret == pytest.ExitCode.OK:
        check_written(out)
        assert '"base_urls"' in (out / "report.json").read_text()
    assert leaks(pytester.path, result.stdout.str(), result.stderr.str()) == []
