"""A request setting changed on purpose (max tokens, temperature, extra body, wire format,
history echo) is declared with ``--bfcl-settings-change``: the gate compares with the baseline
as usual and every report says which settings differ; undeclared, the baseline is refused in
one line naming the declaration. The extra body's digest is salted and stretched."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from pytest_bfcl.gate.settings_change import (
    digests_differ,
    extra_body_digest,
    refusal_hint,
    setting_differences,
    undeclared,
)
from pytest_bfcl.record_baseline import main as record_baseline
from pytest_bfcl.testing.fake_openai import FakeOpenAI


def _meta(**model_info):
    return {"model_info": {"kind": "openai-compatible", **model_info}, "temperature": 0.001}


def test_each_difference_is_named_by_the_setting_it_declares():
    before = _meta(sampling={"max_tokens": 512}, history_echo="full")
    after = {**_meta(sampling={"max_tokens": 1024}, history_echo="no-reasoning"),
             "temperature": 0.7, "wire_format": "responses", "extra_body": {"top_k": 5}}  # fmt: skip
    found = setting_differences(before, after)
    assert [d.name for d in found] == [
        "temperature", "wire_format", "max_tokens", "history_echo", "extra_body",
    ]  # fmt: skip
    assert undeclared(found, ["max_tokens", "temperature"]) == [
        d.line for d in found if d.name not in ("max_tokens", "temperature")
    ]
    hint = refusal_hint(found[2:3], [])
    assert "--bfcl-settings-change=max_tokens" in hint and "bfcl_settings_change" in hint


def test_a_run_without_requests_is_another_model_not_a_declarable_setting():
    [found] = setting_differences(_meta(), {**_meta(), "temperature": None})
    assert found.name == "requests"


def test_the_extra_body_digest_is_salted_and_stretched():
    secret = {"api_key": "1234"}
    digest = extra_body_digest(secret)
    assert digest is not None and "1234" not in digest
    assert extra_body_digest(secret) == digest  # one salt per process: every report alike
    salt = digest.split("$")[2]
    assert extra_body_digest(secret, "00" * 16) != digest  # another salt, another digest
    assert extra_body_digest(secret, salt) == digest
    # a guess costs a full stretching: far from the microseconds of a bare sha256
    started = time.perf_counter()
    extra_body_digest({"api_key": "1235"}, salt)
    assert time.perf_counter() - started > 0.01
    assert not digests_differ(digest, None, secret)  # the same secret, checked unmasked
    assert digests_differ(digest, None, {"api_key": "9999"})  # another one
    assert not digests_differ(digest, None, None)  # nothing unmasked at hand: taken as alike


def _endpoint_run(pytester, url: str, tmp_path: Path, name: str, *extra: str):
    report = tmp_path / f"{name}.json"
    result = pytester.runpytest_subprocess(
        "--bfcl-model=test-model", f"--bfcl-base-url={url}", "--bfcl-category=live_relevance",
        "--bfcl-no-cache", f"--bfcl-report={report}", f"--junitxml={tmp_path / name}.xml",
        "-p", "no:cacheprovider", *extra, timeout=300,
    )  # fmt: skip
    return result, report


def test_a_declared_max_tokens_change_is_measured_and_decided_as_usual(pytester, dataset, tmp_path):
    baseline = tmp_path / "main-baseline.json"
    with FakeOpenAI(dataset, ["live_relevance"]) as server:
        recorded, _ = _endpoint_run(
            pytester, server.base_url, tmp_path, "main", "--bfcl-max-tokens=512",
            f"--bfcl-save-baseline={baseline}",
        )  # fmt: skip
        assert recorded.ret == 0
        refused, _ = _endpoint_run(
            pytester, server.base_url, tmp_path, "undeclared", "--bfcl-max-tokens=1024",
            f"--bfcl-baseline={baseline}",
        )  # fmt: skip
        measured, report = _endpoint_run(
            pytester, server.base_url, tmp_path, "declared", "--bfcl-max-tokens=1024",
            f"--bfcl-baseline={baseline}", "--bfcl-settings-change=max_tokens",
            f"--bfcl-save-baseline={tmp_path / 'run.json'}", f"--bfcl-html={tmp_path / 'r.html'}",
        )  # fmt: skip
    assert refused.ret == 4
    [line] = [x for x in refused.stderr.lines if "does not fit" in x]
    assert "--bfcl-max-tokens differs: baseline 512, this run 1024" in line
    assert "--bfcl-settings-change=max_tokens" in line
    assert "--bfcl-save-baseline" not in line  # never a command writing over the given copy
    assert measured.ret == 0, measured.stdout.str()[-3000:]
    out = measured.stdout.str()
    assert out.count("settings differ from the baseline (declared): --bfcl-max-tokens") >= 2
    assert "The comparison measures their effect." in out
    data = json.loads(report.read_text())
    [note] = data["metadata"]["settings_changes"]
    assert "--bfcl-max-tokens differs" in note and data["metadata"]["settings_change"] == [
        "max_tokens"
    ]
    assert "settings changed on purpose" in (tmp_path / "r.html").read_text()
    stamp = json.loads((tmp_path / "run.json").read_text())["metadata"]
    assert stamp["settings_changes"] == [note]  # the run's baseline says it too
    junit = (tmp_path / "declared.xml").read_text()
    assert 'name="bfcl_settings_changes"' in junit
    compared = subprocess.run(
        [sys.executable, "-m", "pytest_bfcl.compare", str(baseline), str(tmp_path / "run.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert "settings differ from the baseline (declared): --bfcl-max-tokens" in compared.stdout
    # landed: the default branch's run records the new baseline in place of the committed one
    committed = tmp_path / "committed.json"
    committed.write_bytes(baseline.read_bytes())
    assert record_baseline([str(committed), str(tmp_path / "run.json")]) == 0
    assert committed.read_bytes() == (tmp_path / "run.json").read_bytes()
    assert record_baseline([str(committed), str(tmp_path / "run.json")]) == 0  # alike: kept
    # a worse model under the declared change still fails the gate
    with FakeOpenAI(dataset, []) as worse:
        failed, _ = _endpoint_run(
            pytester, worse.base_url, tmp_path, "worse", "--bfcl-max-tokens=1024",
            f"--bfcl-baseline={baseline}", "--bfcl-settings-change=max_tokens",
        )  # fmt: skip
    assert failed.ret == 1, failed.stdout.str()[-3000:]


def test_an_unknown_setting_name_is_refused_naming_the_known_ones(pytester):
    result = pytester.runpytest("--bfcl-model=oracle", "--bfcl-settings-change=max_token")
    assert result.ret == 4
    assert "max_tokens, temperature, extra_body" in result.stderr.str()
