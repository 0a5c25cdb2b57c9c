"""Baselines that cannot lie by accident: merges of one model under one policy, each run once;
the known-errors policy compared; an older format label that does not skip checks; totals that
make sense. What the digest does not protect against (a forger) is in docs/run-integrity.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_bfcl.gate.baseline import (
    BaselineError,
    baseline_data,
    load_baseline,
    merge_baselines,
    stamp_differences,
    verdicts_digest,
)
from pytest_bfcl.gate.baseline_integrity import new_run_id
from pytest_bfcl.merge_baselines import main as merge_main

VERDICTS = {f"simple_python_{i}": i % 3 != 0 for i in range(30)}


def metadata(**changes) -> dict:
    base = {
        "model": "team-model",
        "model_info": {"kind": "openai-compatible", "identity": ""},
        "mode": "fc",
        "categories": ["simple_python"],
        "dataset": {"version": "2026.3.23", "sha256": "abc"},
        "scoring_rules": 1,
        "known_errors": "exclude",
        "run_id": new_run_id(),
        "finished_at": "2026-11-26T00:00:00+00:00",
    }
    base.update(changes)
    return base


def write(path: Path, meta: dict, verdicts: dict | None = None) -> Path:
    data = baseline_data(verdicts or VERDICTS, meta, {}, {"simple_python": 30})
    path.write_text(json.dumps(data))
    return path


def loaded(tmp_path: Path, name: str, **changes):
    return load_baseline(write(tmp_path / f"{name}.json", metadata(**changes)))


# -- merging ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model": "another-model"}, "different models (another-model, team-model)"),
        (
            {"model_info": {"kind": "openai-compatible", "identity": "ckpt-2"}},
            "different models (team-model, team-model [ckpt-2])",
        ),
        ({"known_errors": "correct"}, "known-errors policy differs"),
        ({"mode": "prompt"}, "mode differs"),
        ({"dataset": {"version": "2025.1.1", "sha256": "def"}}, "dataset version differs"),
        (
            {
                "model_info": {
                    "kind": "openai-compatible",
                    "identity": "",
                    "wire_format": "responses",
                }
            },
            "wire format differs: baseline responses, this run chat-completions",
        ),
        ({"wire_format": "responses"}, "wire format differs"),
        (
            {"extra_body": {"api_key": "***"}, "extra_body_digest": "1" * 64},
            "request fields differ",
        ),
    ],
)
def test_baselines_that_do_not_fit_are_not_merged(tmp_path, change, message):
    with pytest.raises(BaselineError, match="cannot be merged") as raised:
        merge_baselines([loaded(tmp_path, "a"), loaded(tmp_path, "b", **change)])
    assert message in str(raised.value)


def test_masked_request_fields_compare_by_the_digest_of_their_values(tmp_path):
    masked = {"extra_body": {"api_key": "***"}}
    a = loaded(tmp_path, "a", **masked, extra_body_digest="1" * 64)
    same = metadata(**masked, extra_body_digest="1" * 64)
    other = metadata(**masked, extra_body_digest="2" * 64)
    assert stamp_differences(a, same) == []
    [problem] = stamp_differences(a, other)
    assert "masked values differ" in problem
    # a baseline recorded before the digest was stamped compares by the masked text alone
    assert stamp_differences(loaded(tmp_path, "old", **masked), other) == []


def test_a_run_on_another_wire_format_is_refused_by_the_gate(tmp_path):
    chat = loaded(tmp_path, "chat")  # recorded before the stamp: its model kind says it
    [problem] = stamp_differences(chat, metadata(wire_format="responses"))
    assert problem.startswith("wire format differs: baseline chat-completions, this run responses")
    oracle = loaded(tmp_path, "oracle", model_info={"kind": "oracle"})
    assert stamp_differences(oracle, metadata(wire_format="responses")) == []


def test_a_token_limit_that_changes_the_requests_is_refused(tmp_path):
    def sampled(limit):
        return {"kind": "openai-compatible", "identity": "", "sampling": {"max_tokens": limit}}

    recorded = loaded(tmp_path, "a", model_info=sampled(None))
    [problem] = stamp_differences(recorded, metadata(model_info=sampled(512)))
    assert problem.startswith(
        "--bfcl-max-tokens differs: baseline unset (the server's default), this run 512"
    )
    assert stamp_differences(recorded, metadata(model_info=sampled(None))) == []


def test_another_history_echo_is_refused(tmp_path):
    def echoing(how):
        return {"kind": "openai-compatible", "identity": "", "history_echo": how}

    recorded = loaded(tmp_path, "a", model_info=echoing("as-returned"))
    [problem] = stamp_differences(recorded, metadata(model_info=echoing("no-reasoning")))
    assert "--bfcl-history-echo differs" in problem
    with pytest.raises(BaselineError, match="history-echo differs"):
        merge_baselines([recorded, loaded(tmp_path, "b", model_info=echoing("no-reasoning"))])


def test_the_same_run_is_never_merged_twice(tmp_path, capsys):
    one = write(tmp_path / "one.json", metadata())
    assert merge_main([str(tmp_path / "m.json"), str(one), str(one)]) == 2
    err = capsys.readouterr().err
    assert "would count more than once" in err and "\n" not in err.strip()
    copies = [str(one)] * 1000
    assert merge_main([str(tmp_path / "m.json"), *copies]) == 2
    assert not (tmp_path / "m.json").exists()


def test_copies_of_an_older_baseline_without_a_run_id_count_as_one_run(tmp_path):
    meta = metadata()
    del meta["run_id"]
    old = load_baseline(write(tmp_path / "old.json", meta))
    with pytest.raises(BaselineError, match="more than once"):
        merge_baselines([old, old])


def test_a_merged_baseline_names_its_runs_and_is_not_merged_again_with_one_of_them(tmp_path):
    a, b, c = (loaded(tmp_path, name) for name in "abc")
    merged = merge_baselines([a, b])
    assert merged["metadata"]["merged_runs"] == [a.metadata["run_id"], b.metadata["run_id"]]
    assert merged["metadata"]["run_id"] is None
    (tmp_path / "m.json").write_text(json.dumps(merged))
    again = load_baseline(tmp_path / "m.json")
    assert merge_baselines([again, c])["metadata"]["merged_runs"][-1] == c.metadata["run_id"]
    with pytest.raises(BaselineError, match="more than once"):
        merge_baselines([again, a])


# -- the known-errors policy is a stamp ------------------------------------------------------


def test_a_baseline_recorded_under_another_known_errors_policy_is_refused(tmp_path):
    baseline = loaded(tmp_path, "a", known_errors="correct")
    problems = stamp_differences(baseline, metadata(known_errors="include"))
    assert any(
        "known-errors policy differs: baseline 'correct', this run 'include'" in p
        and "--bfcl-known-errors=correct" in p
        for p in problems
    ), problems
    assert not stamp_differences(baseline, metadata(known_errors="correct"))
    # exclude and include judge against the same (published) truth: comparable
    published = loaded(tmp_path, "b", known_errors="exclude")
    assert not stamp_differences(published, metadata(known_errors="include"))


# -- format labels and totals ----------------------------------------------------------------


@pytest.mark.parametrize("label", ["pytest-bfcl-baseline/1", "pytest-bfcl-baseline/2"])
def test_relabelling_with_an_older_format_skips_no_check(tmp_path, label):
    path = write(tmp_path / "b.json", metadata())
    data = json.loads(path.read_text())
    data["format"] = label
    data["verdicts"] = {i: False for i in data["verdicts"]}  # every verdict failed ...
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match="does not add up"):
        load_baseline(path)
    data["digest"] = verdicts_digest(data["verdicts"])  # ... and the digest recomputed
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match=f"labelled '{label}' but holds"):
        load_baseline(path)


@pytest.mark.parametrize(
    ("totals", "message"),
    [
        ({"expected": -5, "scored": 30}, "expected total -5 is not a count"),
        ({"expected": 10**9, "scored": 30}, "is not a count"),
        ({"expected": 20, "scored": 30}, "recorded 30 scored of 20 expected"),
    ],
)
def test_nonsense_totals_are_refused(tmp_path, totals, message):
    path = write(tmp_path / "b.json", metadata())
    data = json.loads(path.read_text())
    data["totals"]["simple_python"] = totals
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match=message):
        load_baseline(path)
