"""The kind registry: every kind has one spec, categories are scored by the kind they declare
(never by their name), and what a kind declares reaches the engine, scheduler and results."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_bfcl.check.single_turn import ast_rules, evaluate_single_turn
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.custom import (
    CustomCategory,
    add_custom_categories,
    unregister_custom_categories,
)
from pytest_bfcl.dataset.layout import ResultLayout
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.kinds import KINDS, kind_of, sort_key
from pytest_bfcl.markers import marker_names
from pytest_bfcl.models.replay import resolve_result_root
from pytest_bfcl.scoring import ScoringOptions

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom-hooks" / "acme_tools.json"
FC = ScoringOptions("fc", True)


def test_every_kind_has_one_spec_that_names_it():
    assert set(KINDS) == set(Kind)
    assert all(spec.kind is kind for kind, spec in KINDS.items())


def test_every_registered_category_has_a_kind_with_what_it_needs():
    for name, category in CATEGORIES.items():
        assert kind_of(name).kind is category.kind
        if category.kind is Kind.AST:
            assert category.checker in ("simple", "multiple", "parallel", "parallel_multiple"), name
        if category.kind is Kind.MEMORY:
            assert category.variant in ("kv", "vector", "rec_sum"), name
    diagnostic = kind_of("format_sensitivity")  # prompting formats: left out of fc runs
    assert diagnostic.skip_reason(SimpleNamespace(scoring=FC)) is not None
    assert diagnostic.skip_reason(SimpleNamespace(scoring=ScoringOptions("prompt", True))) is None
    assert kind_of("memory_vector").needed_packages(CATEGORIES["memory_vector"])[1] == "memory"
    assert kind_of("memory_kv").needed_packages(CATEGORIES["memory_kv"]) == ((), "")


@pytest.fixture
def named_against_their_kind(tmp_path):
    """An irrelevance category without the word in its name, and a relevance category whose
    name contains "irrelevance"."""
    line = json.loads(EXAMPLE.read_text().splitlines()[0])
    declared = {"no_tool_needed": "irrelevance", "irrelevance_lookalike": "relevance"}
    customs = []
    for name, kind in declared.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**line, "id": f"{name}_0"}) + "\n")
        customs.append(CustomCategory(name=name, questions=path, kind=kind))  # type: ignore[arg-type]
    add_custom_categories(customs)
    yield {name: Entry.model_validate({**line, "id": f"{name}_0"}) for name in declared}
    unregister_custom_categories()


def test_relevance_is_scored_by_the_declared_kind_not_the_name(named_against_their_kind):
    entries = named_against_their_kind
    a_call = [{"create_ticket": json.dumps({"title": "printer"})}]
    no_call = "I cannot help with that."
    irrelevance = entries["no_tool_needed"]
    assert evaluate_single_turn(irrelevance, None, no_call, FC).valid
    failed = evaluate_single_turn(irrelevance, None, a_call, FC)
    assert not failed.valid and failed.error_type == "irrelevance_error:decoder_success"
    relevance = entries["irrelevance_lookalike"]
    assert evaluate_single_turn(relevance, None, a_call, FC).valid
    failed = evaluate_single_turn(relevance, None, no_call, FC)
    assert not failed.valid and failed.error_type == "relevance_error:decoder_failed"
    # the path the engine takes: the category's declared kind scores it
    run = SimpleNamespace(scoring=FC)
    assert not kind_of("no_tool_needed").score(irrelevance, None, a_call, run).valid
    assert kind_of("irrelevance_lookalike").score(relevance, None, a_call, run).valid


def test_ast_rules_are_declared_and_format_copies_take_their_sources():
    assert CATEGORIES["live_parallel_multiple"].checker == "parallel_multiple"
    assert CATEGORIES["simple_javascript"].checker == "simple"
    copy = Entry.model_validate(
        {
            "id": "format_sensitivity_7:ret_fmt=json:parallel_3",
            "question": [[{"role": "user", "content": "q"}]],
            "function": [],
            "format_config": "ret_fmt=json",
        }
    )
    assert ast_rules(copy) == "parallel"


def test_kinds_declare_markers_result_order_and_costs():
    assert "bfcl_memory" in marker_names(CATEGORIES["memory_rec_sum"])
    assert "bfcl_web_search" in marker_names(CATEGORIES["web_search_no_snippet"])
    assert not any(m.startswith("bfcl_memory") for m in marker_names(CATEGORIES["simple_python"]))
    ids = ["memory_kv_3-student-0", "live_simple_2-1-0", "web_search_base_1", "multi_turn_base_0"]
    assert sorted(ids, key=sort_key) == [
        "web_search_base_1",
        "live_simple_2-1-0",
        "multi_turn_base_0",
        "memory_kv_3-student-0",
    ]
    turns = Entry.model_validate({"id": "multi_turn_base_0", "question": [[], [], []]})
    assert kind_of("multi_turn_base").requests(turns) == 6


def test_a_replay_directory_of_custom_categories_only_is_accepted(tmp_path):
    (tmp_path / "custom").mkdir()
    (tmp_path / "custom" / "BFCL_v4_acme_result.json").write_text('{"id": "acme_0"}\n')
    assert ResultLayout(tmp_path).holds_results()
    assert resolve_result_root(tmp_path) == tmp_path.resolve()
    assert not ResultLayout(tmp_path / "custom").holds_results()
