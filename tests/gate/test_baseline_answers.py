"""The recorded run's answers a baseline carries: packed inside it, bounded, read back, kept
through a merge and a signature, and a baseline without them still read."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from pytest_bfcl.gate import (
    Baseline,
    BaselineAnswers,
    baseline_data,
    load_baseline,
    merge_baselines,
    signed,
)
from pytest_bfcl.gate.baseline_answers import (
    ANSWER_LIMIT,
    MIN_ANSWER,
    NO_ANSWERS,
    TOTAL_LIMIT,
    pack_answers,
    unpack_answers,
)

META = {"model": "m", "mode": "fc", "categories": ["simple_python"], "dataset": {}}


def _baseline(tmp_path, verdicts, answers, name="b.json", run_id="r1", key=None):
    data = baseline_data(verdicts, {**META, "run_id": run_id}, {}, answers=answers)
    path = tmp_path / name
    path.write_text(json.dumps(signed(data, key)))
    return path


def test_answers_travel_inside_the_baseline_and_read_back(tmp_path):
    answers = {"simple_python_0": "[f(a=1)]", "simple_python_1": "text, not a call"}
    path = _baseline(tmp_path, {"simple_python_0": True, "simple_python_1": False}, answers)
    raw = json.loads(path.read_text())
    assert raw["answers"]["entries"] == 2 and raw["answers"]["left_out"] == 0
    assert "[f(a=1)]" not in path.read_text()  # compressed, not plain
    store = BaselineAnswers.of(load_baseline(path))
    assert store.all() == answers and store.why_none is None
    assert store.get("simple_python_0") == "[f(a=1)]"
    assert "not scored there" in store.missing("simple_python_7")


def test_each_answer_and_the_whole_are_bounded():
    long = "x" * (ANSWER_LIMIT * 3)
    packed = pack_answers({"a": long, "b": "short"})
    read = unpack_answers(packed)
    assert len(read["a"]) == ANSWER_LIMIT and read["a"].endswith("...")
    assert packed["answer_limit"] == ANSWER_LIMIT
    # past the total, every answer is cut shorter and each entry keeps one
    many = {f"e{n:05}": "y" * ANSWER_LIMIT for n in range(TOTAL_LIMIT // ANSWER_LIMIT + 5)}
    packed = pack_answers(many)
    assert packed["left_out"] == 0 and packed["entries"] == len(many)
    assert MIN_ANSWER < packed["answer_limit"] < ANSWER_LIMIT
    assert sum(map(len, unpack_answers(packed).values())) <= TOTAL_LIMIT
    # past the total at the shortest cut, the last entries are left out and counted
    more = {f"e{n:05}": "z" * (MIN_ANSWER + 100) for n in range(TOTAL_LIMIT // MIN_ANSWER + 5)}
    packed = pack_answers(more)
    assert packed["left_out"] == 5 and packed["answer_limit"] == MIN_ANSWER
    store = BaselineAnswers(packed)
    missing = sorted(set(more) - set(store.all()))
    assert missing == sorted(more)[-5:] and "past the size limit" in store.missing(missing[0])
    assert len(packed["data"]) < 6_000_000  # the whole field stays bounded


def test_a_baseline_without_answers_is_read_and_says_why_none(tmp_path):
    data = baseline_data({"simple_python_0": True}, META, {})
    assert "answers" not in data  # the wire format of a baseline without them is unchanged
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    store = BaselineAnswers.of(load_baseline(path))
    assert store.get("simple_python_0") is None and store.why_none == NO_ANSWERS
    assert store.missing("simple_python_0") == NO_ANSWERS


@pytest.mark.parametrize(
    "field, why",
    [
        ({"encoding": "zstd", "data": ""}, "encoding"),
        ({"encoding": "gzip+base64"}, "no data"),
        ({"encoding": "gzip+base64", "data": "not base64!"}, "Error"),
        (
            {
                "encoding": "gzip+base64",
                "data": base64.b64encode(gzip.compress(b"[1, 2]")).decode(),
            },
            "not a table",
        ),
    ],
)
def test_unreadable_answers_leave_the_verdicts_and_say_why(field, why):
    store = BaselineAnswers(field)
    assert store.get("x") is None
    assert why in str(store.why_none) and "verdicts still gate" in str(store.why_none)


@pytest.mark.parametrize("field", ["gzip+base64", ["a", "b"], 3])
def test_an_answers_field_of_another_shape_leaves_the_verdicts_gating(tmp_path, field):
    data = baseline_data({"simple_python_0": True}, META, {})
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({**data, "answers": field}))
    baseline = load_baseline(path)  # the verdicts are read whatever the answers' shape
    assert baseline.verdicts == {"simple_python_0": True}
    store = BaselineAnswers.of(baseline)
    assert store.get("simple_python_0") is None and "verdicts still gate" in str(store.why_none)


def test_a_payload_that_expands_without_bound_is_refused():
    bomb = gzip.compress(b"{" + b" " * (70 * 2**20) + b"}", 9)
    store = BaselineAnswers({"encoding": "gzip+base64", "data": base64.b64encode(bomb).decode()})
    assert store.all() == {} and "expand past" in str(store.why_none)
    assert str(store.why_none).count("cannot be read") == 1  # said once, not nested in itself


def test_a_payload_nested_past_the_stack_is_refused_not_raised():
    deep = b'{"simple_python_0": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    packed = base64.b64encode(gzip.compress(deep, 9)).decode()
    store = BaselineAnswers({"encoding": "gzip+base64", "data": packed})
    assert store.get("simple_python_0") is None
    assert "nested" in str(store.why_none) and "verdicts still gate" in str(store.why_none)


def test_a_signature_covers_the_answers(tmp_path):
    key = b"k" * 32
    path = _baseline(tmp_path, {"simple_python_0": True}, {"simple_python_0": "[f()]"}, key=key)
    load_baseline(path, key)
    raw = json.loads(path.read_text())
    raw["answers"] = pack_answers({"simple_python_0": "[g()]"})
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="signature does not match"):
        load_baseline(path, key)


def test_a_merge_keeps_an_answer_of_the_merged_verdict(tmp_path):
    ids = ["simple_python_0", "simple_python_1"]
    first = _baseline(
        tmp_path, dict.fromkeys(ids, True), {i: f"pass {i}" for i in ids}, "1.json", "r1"
    )
    second = _baseline(
        tmp_path,
        {ids[0]: True, ids[1]: False},
        {ids[0]: "pass again", ids[1]: "failed here"},
        "2.json",
        "r2",
    )
    merged = Baseline.model_validate(merge_baselines([load_baseline(first), load_baseline(second)]))
    store = BaselineAnswers.of(merged)
    assert store.get(ids[0]) == f"pass {ids[0]}"
    assert store.get(ids[1]) == "failed here"  # failed in a run: a failing answer is shown


def test_a_merge_of_baselines_without_answers_holds_none(tmp_path):
    paths = []
    for n in (1, 2):
        data = baseline_data({"simple_python_0": True}, {**META, "run_id": f"r{n}"}, {})
        paths.append(tmp_path / f"{n}.json")
        paths[-1].write_text(json.dumps(data))
    merged = merge_baselines([load_baseline(p) for p in paths])
    assert "answers" not in merged
