"""Category names, groups, id parsing and result ordering."""

import pytest

from pytest_bfcl.dataset.categories import (
    ALL_SCORING,
    UnknownCategoryError,
    category_of_id,
    expand_categories,
    index_of_id,
)
from pytest_bfcl.kinds import sort_key


def test_collections_expand_in_canonical_order():
    assert expand_categories("non_python") == ["simple_java", "simple_javascript"]
    assert expand_categories("memory,simple_python,memory_kv") == [
        "simple_python",
        "memory_kv",
        "memory_vector",
        "memory_rec_sum",
    ]
    assert expand_categories("all_scoring") == list(ALL_SCORING)
    assert "format_sensitivity" in expand_categories("all")
    assert len(expand_categories("python")) == 11


def test_unknown_category_is_an_error():
    with pytest.raises(UnknownCategoryError, match="simple_pyhton"):
        expand_categories("simple_pyhton")


@pytest.mark.parametrize(
    ("entry_id", "category", "index"),
    [
        ("simple_python_12", "simple_python", 12),
        ("live_simple_3-2-0", "live_simple", 3),
        ("memory_kv_prereq_0-customer-0", "memory_kv_prereq", 0),
        ("format_sensitivity_7:ret_fmt=python&x=y:simple_python_1", "format_sensitivity", 7),
    ],
)
def test_id_parsing(entry_id, category, index):
    assert category_of_id(entry_id) == category
    assert index_of_id(entry_id) == index


def test_sort_key_orders_prerequisites_first_and_memory_last():
    ids = [
        "memory_kv_1-a-0",
        "multi_turn_base_2",
        "simple_python_10",
        "simple_python_9",
        "web_search_base_0",
        "memory_kv_prereq_0-a-0",
    ]
    assert sorted(ids, key=sort_key) == [
        "memory_kv_prereq_0-a-0",
        "web_search_base_0",
        "simple_python_9",
        "simple_python_10",
        "multi_turn_base_2",
        "memory_kv_1-a-0",
    ]


def test_result_locations(tmp_path):
    from pytest_bfcl.dataset.layout import ResultLayout, category_file

    assert str(category_file("live_simple")) == "live/BFCL_v4_live_simple_result.json"
    assert str(category_file("memory_rec_sum")).startswith("agentic/memory/rec_sum/")
    assert (
        category_file("web_search_no_snippet").name == "BFCL_v4_web_search_no_snippet_result.json"
    )
    layout = ResultLayout(tmp_path)
    assert layout.final_snapshot("memory_kv", "student") == (
        tmp_path / "agentic/memory/kv/memory_snapshot/student_final.json"
    )
    assert layout.prerequisite_file("memory_vector").name == (
        "BFCL_v4_memory_vector_prereq_result.json"
    )
    assert not layout.holds_results()
    (tmp_path / "live").mkdir()
    assert layout.holds_results()
