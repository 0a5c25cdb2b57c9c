"""No secret at rest when the server itself quotes one: a server that echoes the API key (the
variable --bfcl-api-key-env names), the Authorization header it was sent, another bearer token
and a provider-shaped key in its answers and their reasoning. Every output a run and the compare
tool write (HTML, JSON, junit, baselines, results, response cache, CSV, chart, step summary,
compare's page and lines, the terminal) is searched for them."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_bfcl.redact import MASK, forget_registered_secrets, redact_text

NEEDLE = "7f3a9c"
KEY = f"gw-SENTINEL-{NEEDLE}-key"  # the key variable's value: its name says nothing of a key
OTHER_BEARER = f"tok{NEEDLE}OTHERBEARER"  # someone else's bearer token, quoted by the server
KEY_SHAPED = f"sk-proj-{NEEDLE}ABCDEFGHIJKLMNOPQRST"  # a provider's key, the run's or not
EXTRA = f"also Bearer {OTHER_BEARER} and {KEY_SHAPED}"


def leak_forms() -> list[str]:
    """The sentinel, and the key's base64 at each alignment (a Basic header carries it so)."""
    forms = [NEEDLE]
    for pad in ("", "a", "ab"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode((pad + KEY).encode()).decode()
            skip = {0: 0, 1: 2, 2: 3}[len(pad)]
            forms.append(text[skip : skip + 12])
    return forms


def leaks(root: Path, outputs: dict[str, str]) -> list[str]:
    forms = [form.encode() for form in leak_forms()]
    found = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*"))
        if path.is_file() and any(form in path.read_bytes() for form in forms)
    ]
    return found + [
        name for name, text in outputs.items() if any(f.decode() in text for f in forms)
    ]


@pytest.fixture(autouse=True)
def fresh_registry():
    forget_registered_secrets()
    yield
    forget_registered_secrets()


def test_the_masking_path_masks_what_such_a_server_says():
    text = f"Authorization: Bearer {KEY}; {EXTRA}"
    masked = redact_text(text)
    assert NEEDLE in text and NEEDLE in redact_text(KEY)  # the key alone is no known shape
    assert masked == f"Authorization: Bearer {MASK}; also Bearer {MASK} and {MASK}"


@pytest.mark.parametrize(
    "text",
    [
        "Bearer Bonds and the bearer instrument",  # prose: no token there
        "task-abcdefghijklmnopqrstuvwxyz and desk-0123456789abcdefghijkl",  # no key's shape
        '{"get_token": "{\\"user\\": \\"alice\\"}"}',  # a call named like a secret
    ],
)
def test_what_only_looks_like_a_key_is_left_alone(text):
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "key",
    [
        "sk-ant-api03-0123456789abcdefghij",
        "hf_0123456789abcdefghijklmnopqrstuv",
        "ghp_0123456789abcdefghijklmnopqrstuvwx",
        "AKIA0123456789ABCDEF",
        "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig_part",
    ],
)
def test_a_key_of_a_providers_shape_is_masked_whoever_it_belongs_to(key):
    assert redact_text(f"answer: {key} end") in ("answer: *** end", "answer: Bearer *** end")


def outputs_of(out: Path, name: str) -> list[str]:
    return [
        f"--bfcl-report={out / f'{name}.json'}",
        f"--bfcl-html={out / f'{name}.html'}",
        f"--bfcl-save-baseline={out / f'{name}-baseline.json'}",
        f"--bfcl-results-dir={out / f'{name}-results'}",
        f"--bfcl-csv={out / f'{name}-csv'}",
        f"--bfcl-chart={out / f'{name}.svg'}",
        f"--bfcl-cache-dir={out / f'{name}-cache'}",
        f"--junitxml={out / f'{name}-junit.xml'}",
        "--bfcl-list-failures=100",
        "-p",
        "no:cacheprovider",
        "-v",
        "-rA",
    ]


def test_a_server_echoing_the_key_leaves_it_in_no_file_and_no_output(
    pytester, monkeypatch, dataset
):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    out = pytester.path / "out"
    monkeypatch.setenv("MY_GATEWAY", KEY)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(out / "summary.md"))
    common = [
        "--bfcl-model=test-model",
        "--bfcl-api-key-env=MY_GATEWAY",
        "--bfcl-category=live_parallel",
        "--bfcl-retries=0",
    ]
    outputs: dict[str, str] = {}
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        main = pytester.runpytest_subprocess(
            *common, f"--bfcl-base-url={fake.base_url}", *outputs_of(out, "main")
        )
        main.assert_outcomes(passed=16)
        fake.chat_fault, fake.echo_extra = "echo_key", EXTRA
        pr = pytester.runpytest_subprocess(
            *common,
            f"--bfcl-base-url={fake.base_url}",
            f"--bfcl-baseline={out / 'main-baseline.json'}",
            "--bfcl-explain=live_parallel_0-0-0",
            *outputs_of(out, "pr"),
        )
        assert fake.authorizations and all(KEY in a for a in fake.authorizations)
    outputs.update(main_out=main.stdout.str(), pr_out=pr.stdout.str(), pr_err=pr.stderr.str())
    assert pr.ret == pytest.ExitCode.TESTS_FAILED  # every answer changed: the gate fails
    assert "Authorization: Bearer ***" in outputs["pr_out"]  # the echo was seen, masked
    for before, after in (("main", "pr"), ("pr", "main")):  # each run's answers on each side
        compare = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest_bfcl.compare",
                str(out / f"{before}-baseline.json"),
                str(out / f"{after}-baseline.json"),
                f"--html={out / f'compare-{before}-{after}.html'}",
                "--show=20",
            ],
            capture_output=True,
            text=True,
            cwd=pytester.path,
            check=False,
        )
        assert compare.returncode in (0, 1), compare.stderr
        assert "Bearer ***" in compare.stdout  # both answers shown, masked
        outputs[f"compare {before} {after}"] = compare.stdout + compare.stderr
    written = {p.name for p in out.iterdir()}
    for name in ("pr.json", "pr.html", "pr-baseline.json", "pr.svg", "pr-junit.xml",
                 "summary.md", "compare-main-pr.html", "compare-pr-main.html"):  # fmt: skip
        assert name in written, name
    for folder in ("pr-results", "pr-csv", "pr-cache"):
        assert any((out / folder).rglob("*.*")), folder
    # the echo reached every writer (masked), so the search below was not in vain
    echoed = [out / "pr.html", out / "pr.json", out / "pr-junit.xml", out / "compare-main-pr.html"]
    echoed += [p for f in ("pr-results", "pr-cache") for p in (out / f).rglob("*.json")][:3]
    for path in echoed:
        assert b"Bearer ***" in path.read_bytes(), path
    assert leaks(pytester.path, outputs) == []


def test_a_servers_words_reach_the_terminal_and_reports_as_data(pytester, dataset):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    out = pytester.path / "out"
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        fake.faults = {"live_parallel_1-0-1": ["hostile_error"]}
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={fake.base_url}",
            "--bfcl-category=live_parallel",
            "--bfcl-retries=0",
            f"--junitxml={out / 'junit.xml'}",
            f"--bfcl-report={out / 'report.json'}",
            "-p",
            "no:cacheprovider",
            "-rA",
        )
    assert result.parseoutcomes().get("errors") == 1  # the server's failure was reported
    text = result.stdout.str() + result.stderr.str()
    assert "boom\\u001b[2J" in text  # its words, escaped
    for raw in ("\x1b", "\r", "\u202e"):
        assert raw not in text and raw not in (out / "junit.xml").read_text()
    assert max(len(line) for line in text.splitlines()) < 5000


def test_a_cached_answer_stored_with_a_key_is_masked_and_stored_again(
    pytester, monkeypatch, dataset
):
    import json

    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    cache = pytester.path / "cache"
    monkeypatch.setenv("MY_GATEWAY", KEY)
    args = ["--bfcl-model=test-model", "--bfcl-api-key-env=MY_GATEWAY",
            "--bfcl-category=live_parallel", f"--bfcl-cache-dir={cache}",
            "-p", "no:cacheprovider"]  # fmt: skip
    with FakeOpenAI(dataset, ["live_parallel"]) as fake:
        pytester.runpytest_subprocess(*args, f"--bfcl-base-url={fake.base_url}")
        records = [p for p in sorted(cache.rglob("*.json")) if b'"result"' in p.read_bytes()]
        assert records
        for path in records:  # as a version that kept the key in answers stored them
            record = json.loads(path.read_text())
            record["reasoning"] = f"the request said Authorization: Bearer {KEY}"
            path.write_text(json.dumps(record))
        sent = fake.total_requests()
        result = pytester.runpytest_subprocess(*args, f"--bfcl-base-url={fake.base_url}")
        assert fake.total_requests() == sent  # answered from the cache
    result.assert_outcomes(passed=16)
    assert all(b"Bearer ***" in path.read_bytes() for path in records)
    assert leaks(pytester.path, {"out": result.stdout.str()}) == []
