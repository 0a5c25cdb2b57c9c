"""A signed baseline (--bfcl-baseline-key) cannot be forged without the key: a worse model's
baseline with every verdict failed and its totals and digest recomputed is refused."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.gate.baseline import BaselineError, baseline_data, load_baseline, verdicts_digest
from pytest_bfcl.gate.baseline_integrity import new_run_id
from pytest_bfcl.gate.baseline_signature import SignatureError, signed, signing_key
from pytest_bfcl.merge_baselines import main as merge_main

KEY = b"a-ci-secret-of-32-characters-xyz"
VERDICTS = {f"simple_python_{i}": i % 3 != 0 for i in range(30)}


def recorded(path, key=KEY):
    meta = {"model": "m", "mode": "fc", "categories": ["simple_python"], "run_id": new_run_id()}
    path.write_text(json.dumps(signed(baseline_data(VERDICTS, meta, {}), key)))
    return path


def forged(path):
    """Every verdict failed, the digest recomputed: what a pull request could commit."""
    data = json.loads(path.read_text())
    data["verdicts"] = {i: False for i in data["verdicts"]}
    data["digest"] = verdicts_digest(data["verdicts"])
    path.write_text(json.dumps(data))
    return path


def test_a_signed_baseline_loads_with_its_key(tmp_path):
    assert load_baseline(recorded(tmp_path / "b.json"), KEY).verdicts == VERDICTS


def test_a_forged_baseline_passes_the_digest_but_not_the_signature(tmp_path):
    path = forged(recorded(tmp_path / "b.json"))
    assert not any(load_baseline(path).verdicts.values())  # the digest alone: an accident check
    with pytest.raises(BaselineError, match="signature does not match") as raised:
        load_baseline(path, KEY)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("key", [None, b"another-key-of-enough-length"])
def test_an_unsigned_or_otherly_signed_baseline_is_refused(tmp_path, key):
    path = recorded(tmp_path / "b.json", key)
    expected = "is not signed" if key is None else "signature does not match"
    with pytest.raises(BaselineError, match=expected):
        load_baseline(path, KEY)


@pytest.mark.parametrize(
    ("value", "algorithm"), [("é" * 64, "hmac-sha256"), ("0" * 64, "hmac-sha256-é"), ("ab", None)]
)
def test_a_signature_edited_into_any_text_is_refused_in_one_line(tmp_path, value, algorithm):
    path = recorded(tmp_path / "b.json")
    data = json.loads(path.read_text())
    data["signature"] = {"algorithm": algorithm or "hmac-sha256", "value": value}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BaselineError, match="signature") as raised:
        load_baseline(path, KEY)
    assert "\n" not in str(raised.value)


def test_the_key_variable_must_hold_a_usable_key(monkeypatch):
    assert signing_key(None) is None
    monkeypatch.delenv("BFCL_TEST_KEY", raising=False)
    with pytest.raises(SignatureError, match=r"\$BFCL_TEST_KEY, which is not set"):
        signing_key("BFCL_TEST_KEY")
    monkeypatch.setenv("BFCL_TEST_KEY", "short")
    with pytest.raises(SignatureError, match="shorter than 16"):
        signing_key("BFCL_TEST_KEY")
    monkeypatch.setenv("BFCL_TEST_KEY", KEY.decode())
    assert signing_key("BFCL_TEST_KEY") == KEY


def test_a_merge_with_the_key_checks_its_inputs_and_signs_its_output(tmp_path, monkeypatch):
    monkeypatch.setenv("BFCL_TEST_KEY", KEY.decode())
    a, b = recorded(tmp_path / "a.json"), recorded(tmp_path / "b.json")
    out = tmp_path / "m.json"
    assert merge_main([str(out), str(a), str(b), "--key-env", "BFCL_TEST_KEY"]) == 0
    assert load_baseline(out, KEY).samples == 2
    forged(b)
    assert merge_main([str(out), str(a), str(b), "--key-env", "BFCL_TEST_KEY"]) == 2


def test_a_session_signs_what_it_saves_and_refuses_a_forgery(
    pytester, data_source, tmp_path, monkeypatch
):
    monkeypatch.setenv("BFCL_TEST_KEY", KEY.decode())
    baseline = tmp_path / "b.json"
    common = [f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
              "--bfcl-category=simple_javascript",
              "--bfcl-baseline-key=BFCL_TEST_KEY", "-p", "no:cacheprovider"]  # fmt: skip
    saved = pytester.runpytest_subprocess(*common, f"--bfcl-save-baseline={baseline}")
    assert saved.ret == 0 and load_baseline(baseline, KEY).verdicts
    assert KEY.decode() not in baseline.read_text()
    gated = pytester.runpytest_subprocess(*common, f"--bfcl-baseline={baseline}")
    assert gated.ret == 0, gated.stdout.str()[-2000:]
    forged(baseline)
    refused = pytester.runpytest_subprocess(*common, f"--bfcl-baseline={baseline}")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in refused.stderr.str().splitlines() if "signature" in line]
    assert len(lines) == 1 and str(baseline) in lines[0]
