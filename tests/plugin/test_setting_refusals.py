"""Refusals of settings: each is one line, quotes no secret (the extra body's keys, a key
variable), and names HTTP and the API need are not the session header's to take."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.redact import forget_registered_secrets
from pytest_bfcl.settings import build_settings

NEEDLE = "5e1c7d"
EXTRA_BODY = json.dumps(
    {"api_key": f"body-key-{NEEDLE}", "user_token": f"user-{NEEDLE}-tok", "safety": "on"}
)


@pytest.fixture(autouse=True)
def fresh_registry():
    forget_registered_secrets()
    yield
    forget_registered_secrets()


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text("{}")
    return str(path)


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({"sequential": True, "sample": "0.1"}, id="sequential-with-sample"),
        pytest.param({"sequential": True, "gate_mode": "any"}, id="sequential-with-gate"),
        pytest.param({"timeout": "abc"}, id="a-field-of-its-own"),
    ],
)
def test_a_settings_conflict_quotes_no_secret_of_the_extra_body(values, baseline):
    with pytest.raises(ValueError) as raised:
        build_settings(
            {"model": "m", "baseline_path": baseline, "extra_body": EXTRA_BODY, **values}
        )
    message = str(raised.value)
    assert NEEDLE not in message
    assert "\n" not in message and "safety" not in message  # the settings are not quoted
    assert message.startswith("--bfcl-")


def test_an_extra_body_that_is_not_json_is_not_quoted():
    broken = EXTRA_BODY[:-1]
    with pytest.raises(ValueError) as raised:
        build_settings({"model": "m", "extra_body": broken})
    assert "--bfcl-extra-body: is not JSON" in str(raised.value)
    assert NEEDLE not in str(raised.value)


def test_an_extra_body_secret_is_masked_wherever_it_appears_later():
    from pytest_bfcl.redact import redact_text

    build_settings({"model": "m", "extra_body": {"nested": {"client_secret": f"cs-{NEEDLE}-1"}}})
    assert redact_text(f"the server said cs-{NEEDLE}-1 is wrong") == "the server said *** is wrong"


def test_a_value_quoted_in_a_refusal_is_escaped_and_bounded():
    with pytest.raises(ValueError) as raised:
        build_settings({"model": "m", "timeout": "\x1b[2J\u202e" + "9" * 500})
    message = str(raised.value)
    assert "\x1b" not in message and "\u202e" not in message and "\\u001b[2J" in message
    assert len(message) < 300


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "host",
        "Content-Type",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Cookie",
        "Proxy-Authorization",
        "proxy-connection",
        "api-key",
        "X-Api-Key",
        "OpenAI-Organization",
        "OpenAI-Project",
        "X-Stainless-Retry-Count",
    ],
)
def test_names_http_and_the_api_use_are_not_a_session_header(name):
    with pytest.raises(ValueError) as raised:
        build_settings({"model": "m", "session_header": name})
    message = str(raised.value)
    assert message.startswith(f"--bfcl-session-header: {name} is a header the request")
    assert "\n" not in message


@pytest.mark.parametrize("name", ["X-Session-ID", "x-conversation", "Routing-Key-Id", "none"])
def test_a_router_header_is_accepted(name):
    expected = "" if name == "none" else name
    assert build_settings({"model": "m", "session_header": name}).session_header == expected


def test_a_header_name_of_unbounded_length_is_refused():
    with pytest.raises(ValueError, match="must be an HTTP header name"):
        build_settings({"model": "m", "session_header": "X-" + "a" * 300})


def test_the_session_header_authorization_is_refused_before_any_request(pytester, dataset):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={fake.base_url}",
            "--bfcl-category=live_parallel",
            "--bfcl-session-header=Authorization",
            f"--bfcl-extra-body={EXTRA_BODY}",
            "--bfcl-sequential",
            "-p",
            "no:cacheprovider",
        )
        assert fake.total_requests() == 0
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("Authorization is a header the request itself needs") == 1
    assert NEEDLE not in err + result.stdout.str()


def test_a_baseline_field_in_a_refusal_is_escaped_and_bounded(pytester, tmp_path):
    baseline = tmp_path / "baseline.json"
    forged = "\x1b[2J\rBFCL gate: passed\u202e" + "f" * 300_000
    baseline.write_text(json.dumps({"format": forged, "verdicts": {}}))
    result = pytester.runpytest_subprocess(
        "--bfcl-model=oracle",
        "--bfcl-category=simple_python",
        f"--bfcl-baseline={baseline}",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "is not a pytest-bfcl baseline" in err
    assert "\\x1b[2J" in err or "\\u001b[2J" in err  # the field, escaped
    assert "\x1b" not in err and "\r" not in err and "\u202e" not in err
    assert len(err) < 5000
