"""Entry records (what the HTML report shows of each entry) and the bounded renderer behind
them and behind failure explanations."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.models.base import Generation
from pytest_bfcl.report.html.facts import (
    FIELD_LIMIT,
    bounded,
    bounded_conversation,
    build_record,
    functions_key,
)
from pytest_bfcl.report.render import explain_failure


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        [[0] * 100_000] * 100_000,  # 10^10 elements once expanded
        _nested(200_000),  # deeper than any recursion limit
        {"a": 10**20000},  # an integer too long to print
        "x" * 50_000_000,
        [{"k" * 10: ["v" * 100] * 1000}] * 1000,
    ],
    ids=["shared-references", "deep", "huge-int", "long-text", "wide"],
)
def test_bounded_never_renders_more_than_it_keeps(value):
    tracemalloc.start()
    text = bounded(value)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(text) <= FIELD_LIMIT
    assert peak < 5_000_000  # bytes: nothing near the expanded size was built


def test_bounded_matches_json_for_ordinary_values():
    value = {"calls": [{"f": {"a": 1, "b": [1.5, 'x"y'], "c": None, "d": True}}]}
    assert bounded(value) == json.dumps(value, ensure_ascii=False)


def test_explanation_of_a_hostile_value_stays_short():
    verdict = Verdict(
        id="simple_python_0",
        category="simple_python",
        valid=False,
        error_type="type_error",
        errors=[{"detail": [[0] * 100_000] * 100_000}],
        model_output="[f(a=" + "9" * 10_000_000 + ")]",
        decoded=[{"f": {"a": [[0] * 100_000] * 100_000}}],
    )
    text = explain_failure(verdict)
    assert len(text) < 3_000
    assert text.startswith("BFCL simple_python_0 [simple_python] failed: type_error")


class _Entry:
    id = "multi_turn_base_3"
    category = "multi_turn_base"
    question = [[{"role": "user", "content": "cd to tmp"}], [{"role": "user", "content": "ls"}]]


def test_record_of_a_regression_with_its_conversation():
    verdict = Verdict(
        id=_Entry.id,
        category=_Entry.category,
        valid=False,
        error_type="multi_turn:instance_state_mismatch",
        errors=["Model instance for GorillaFileSystem does not match the state"],
        report=["turn 2: state differs", "  GorillaFileSystem.root/tmp: missing"],
    )
    log = [{"begin_of_turn_query": [{"role": "user", "content": "cd"}],
            "step_0": [{"role": "assistant", "content": "[cd(folder='tmp')]"},
                       {"role": "tool", "content": "None"}]}]  # fmt: skip
    generation = Generation(id=_Entry.id, result=[[["cd(folder='tmp')"]]], latency=1.5,
                            details={"inference_log": log})  # fmt: skip
    record = build_record(entry=_Entry, outcome="failed", verdict=verdict,
                          generation=generation, baseline_valid=True, functions_key_="k")  # fmt: skip
    assert record.regression and not record.improvement
    assert record.question.splitlines() == ["-- turn 0 --", "user: cd to tmp", "-- turn 1 --",
                                            "user: ls"]  # fmt: skip
    assert record.detail[1] == "  GorillaFileSystem.root/tmp: missing"
    assert record.conversation is not None
    assert record.conversation[0]["step_0"][1] == {"role": "tool", "content": "None"}
    assert record.latency == 1.5 and record.valid is False


def test_a_huge_conversation_is_cut_with_a_note():
    log = [{"step_0": [{"role": "tool", "content": "y" * 30_000}]} for _ in range(10)]
    cut = bounded_conversation(log)
    assert cut is not None and "not shown (size limit)" in cut[-1]["note"]
    assert len(json.dumps(cut)) < 100_000


def test_same_functions_same_key():
    docs = [{"name": "f", "parameters": {"type": "dict", "properties": {}}}]
    assert functions_key(docs) == functions_key(json.loads(json.dumps(docs)))
    assert functions_key(docs) != functions_key([{"name": "g"}])


def _random_value(rng, depth: int = 0):
    kinds = ["str", "int", "float", "bool", "none", "big-int", "nan", "long-str"]
    if depth < 4:
        kinds += ["list", "tuple", "dict", "dict-int-keys"] * 3
    kind = rng.choice(kinds)
    if kind in ("list", "tuple"):
        items = [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 6))]
        return items if kind == "list" else tuple(items)
    if kind.startswith("dict"):
        keys = [rng.randint(0, 9) if kind == "dict-int-keys" else f"k{rng.randint(0, 99)}"
                for _ in range(rng.randint(0, 5))]  # fmt: skip
        return {key: _random_value(rng, depth + 1) for key in keys}
    return {
        "str": lambda: rng.choice(["", 'a"b', "é\u2028</script>", "x" * rng.randint(0, 900)]),
        "int": lambda: rng.randint(-(10**12), 10**12),
        "float": lambda: rng.choice([0.1, -2.5e-9, 1e16, 3.0]),
        "bool": lambda: rng.random() < 0.5,
        "none": lambda: None,
        "big-int": lambda: 7**5000,
        "nan": lambda: rng.choice([float("nan"), float("inf")]),
        "long-str": lambda: "y" * (FIELD_LIMIT + 10),
    }[kind]()


@pytest.mark.parametrize("limit", [40, 1000, FIELD_LIMIT])
def test_bounded_renders_any_value_as_the_piecewise_renderer_does(limit):
    """The json module renders ordinary values; anything else goes piece by piece. Either
    way the text is the same, cut at the same place."""
    import random

    from pytest_bfcl.report.html.facts import _bounded_pieces, _plain

    rng = random.Random(limit)
    values = [v for v in (_random_value(rng) for _ in range(3000)) if not isinstance(v, str)]
    assert any(_plain(v, limit) for v in values) and not all(_plain(v, limit) for v in values)
    for value in values:
        assert bounded(value, limit) == _bounded_pieces(value, limit), value


def test_docs_are_named_once_per_list_of_doc_objects():
    from pytest_bfcl.report.html.records import DocsRefs

    shared = [{"name": f"f{i}", "description": "é\ud800", "parameters": {"b": 1, "a": [i]}}
              for i in range(4)]  # fmt: skip
    refs = DocsRefs("gw1")
    first = refs.ref(shared)
    assert first == ("gw1:0", shared)
    assert refs.ref(list(shared)) == ("gw1:0", None)  # the same doc objects: named, not sent
    assert refs.ref(shared[:2]) == ("gw1:1", shared[:2])
    assert functions_key(shared) == functions_key(json.loads(json.dumps(shared)))


def test_a_records_html_parts_without_a_model_are_those_of_the_model():
    """The run builds each entry's HTML parts from plain fields; they must be what the
    validated record dumps (index and details, defaults left out, in the record's order)."""
    from pytest_bfcl.report.html.entries import INDEX_FIELDS, compact_json, parts_of
    from pytest_bfcl.report.html.facts import record_fields

    verdicts = [
        None,
        Verdict(id=_Entry.id, category=_Entry.category, valid=True, decoded=[{"f": {"a": 1}}]),
        Verdict(id=_Entry.id, category=_Entry.category, valid=False, error_type="x:y",
                errors=["bad", {"k": [1, 2.5]}], expected=[{"f": {"a": [1]}}],
                report=["turn 0"], passes=1, samples=3),
    ]  # fmt: skip
    generations = [
        None,
        Generation(id=_Entry.id, result="[f(a=1)]", latency=0.25, input_tokens=10,
                   output_tokens=0, reasoning="why", details={"inference_log": [{"q": "x"}]}),
    ]  # fmt: skip
    cases = 0
    for verdict in verdicts:
        for generation in generations:
            for baseline in (None, True, False):
                for message, known in ((None, None), ("skipped: no answer", "ref #1")):
                    kwargs = dict(entry=_Entry, outcome="failed", verdict=verdict,
                                  generation=generation, baseline_valid=baseline,
                                  message=message, functions_key_="k", known_error=known)  # fmt: skip
                    record = build_record(**kwargs)
                    index = set(INDEX_FIELDS)
                    expected = {
                        "index": compact_json(record.model_dump(
                            mode="json", include=index, exclude_defaults=True)),
                        "details": compact_json(record.model_dump(
                            mode="json", exclude=index, exclude_defaults=True)),
                        "category": record.category,
                        "functions": "k",
                    }  # fmt: skip
                    assert parts_of(record_fields(**kwargs)) == expected
                    cases += 1
    assert cases == 36
