"""The AST checker's rules, one example each, including the reference's quirks."""

import pytest

from pytest_bfcl.check.ast_checker import CheckOptions, check_calls, check_one_call, standardize
from pytest_bfcl.dataset.models import FunctionDoc

PY = CheckOptions()
JAVA = CheckOptions(language="java")
JS = CheckOptions(language="javascript")


def doc(name="f", required=(), **props):
    return FunctionDoc.model_validate(
        {
            "name": name,
            "parameters": {"type": "dict", "properties": props, "required": list(required)},
        }
    )


def check(schema, value, candidates, options=PY):
    d = doc(p=schema)
    return check_one_call(d, {"f": {"p": value}}, {"f": {"p": candidates}}, options)


@pytest.mark.parametrize(
    ("schema", "value", "candidates", "error_type"),
    [
        ({"type": "float"}, 5, [5.0], None),  # int -> float leniency at the top level
        ({"type": "integer"}, 5.0, [5], "type_error:simple"),
        ({"type": "integer"}, True, [1], "type_error:simple"),  # bool is not int
        ({"type": "integer"}, "five", ["five"], None),  # a "variable": string against strings
        ({"type": "integer"}, "5", [5], "type_error:simple"),
        ({"type": "array", "items": {"type": "float"}}, [1, 2], [[1.0, 2.0]], "type_error:nested"),
        (
            {"type": "array", "items": {"type": "string"}},
            ["New York, NY", "b"],
            [["new york ny", "B"]],
            None,
        ),
        (
            {"type": "array", "items": {"type": "string"}},
            ["b", "New York"],
            [["new york", "b"]],
            "value_error:list/tuple",
        ),
        ({"type": "array", "items": {"type": "string"}}, [], [""], None),  # "" reads as []
        ({"type": "tuple", "items": {"type": "integer"}}, (1, 2), [[1, 2]], None),
        ({"type": "string"}, "April 1, 2024", ["april 1 2024"], None),
        ({"type": "string"}, "Paris", ["London"], "value_error:string"),
        ({"type": "boolean"}, False, [True], "value_error:others"),
        ({"type": "dict"}, {"a": "X"}, [{"a": ["x"], "b": [""]}], None),
        ({"type": "dict"}, {"a": 1}, [{"a": [1], "b": [2]}], "value_error:dict_key"),
        ({"type": "dict"}, {"c": 1}, [{"a": [1]}], "value_error:dict_key"),
        ({"type": "dict"}, {"a": 2}, [{"a": [1]}], "value_error:dict_value"),
        ({"type": "dict"}, {"a": 2}, [""], "dict_checker:unclear"),
        (
            {"type": "array", "items": {"type": "dict"}},
            [{"a": 1}],
            [[{"a": [1]}, {"a": [2]}]],
            "value_error:list_dict_count",
        ),
        (
            {"type": "array", "items": {"type": "dict"}},
            [{"a": 1}, {"a": 2}],
            [[{"a": [1]}, {"a": [2]}]],
            None,
        ),
    ],
)
def test_python_rules(schema, value, candidates, error_type):
    result = check(schema, value, candidates)
    assert result.valid is (error_type is None), result
    assert result.error_type == error_type


def test_dict_missing_key_wins_over_a_value_error():
    # The missing-key scan runs after a failed value and its error type is reported.
    result = check({"type": "dict"}, {"b": 9}, [{"a": [1], "b": [2]}])
    assert result.error_type == "value_error:dict_key"
    assert len(result.errors) == 2


@pytest.mark.parametrize(
    ("schema", "value", "candidates", "error_type"),
    [
        ({"type": "long"}, "123L", [123], None),
        ({"type": "long"}, "123", [123], "type_error:simple"),  # the L suffix is required
        ({"type": "char"}, "'a'", ["a"], "value_error:string"),  # char never converts
        ({"type": "boolean"}, "true", [True], None),
        ({"type": "double"}, "2.5", [2.5], None),
        ({"type": "float"}, "2.5f", [2.5], None),
        ({"type": "integer"}, 5, [5], "type_error:java"),  # Java values must be strings
        (
            {"type": "ArrayList", "items": {"type": "String"}},
            'new ArrayList<>(Arrays.asList("a", "b"))',
            [["a", "b"]],
            None,
        ),
        (
            {"type": "Array", "items": {"type": "String"}},
            'new String[]{"a"}',
            [["a"]],
            "value_error:list/tuple",
        ),
        ({"type": "Array", "items": {"type": "integer"}}, "new int[]{1, 2}", [[1, 2]], None),
        (
            {"type": "HashMap"},
            'new HashMap<String, Object>() {{ put("k", 5); }}',
            [{"k": [5]}],
            None,
        ),
        ({"type": "any"}, "myVar", ["myVar"], None),
    ],
)
def test_java_rules(schema, value, candidates, error_type):
    result = check(schema, value, candidates, JAVA)
    assert result.valid is (error_type is None), result
    assert result.error_type == error_type


@pytest.mark.parametrize(
    ("schema", "value", "candidates", "error_type"),
    [
        ({"type": "dict"}, "{'k': 'v', 'n': 2}", [{"k": ["v"], "n": [2]}], None),
        ({"type": "dict"}, "{'n': '2'}", [{"n": [2]}], None),  # quoted numbers become numbers
        ({"type": "array", "items": {"type": "String"}}, "['a', 'b']", [["a", "b"]], None),
        (
            {"type": "array", "items": {"type": "String"}},
            "['a,b']",
            [["a,b"]],
            "value_error:list/tuple",
        ),
        ({"type": "float"}, "3", [3.0], None),
        ({"type": "Bigint"}, "5n", [5], None),
        ({"type": "String"}, "'quoted'", ["quoted"], None),
        ({"type": "integer"}, 3, [3], "type_error:js"),
    ],
)
def test_javascript_rules(schema, value, candidates, error_type):
    result = check(schema, value, candidates, JS)
    assert result.valid is (error_type is None), result
    assert result.error_type == error_type


def test_required_unexpected_and_optional_parameters():
    d = doc(required=["a"], a={"type": "integer"}, b={"type": "integer"}, c={"type": "integer"})
    expected = {"f": {"a": [1], "b": [2, ""], "c": [3]}}
    assert (
        check_one_call(d, {"f": {"b": 2}}, expected, PY).error_type
        == "simple_function_checker:missing_required"
    )
    assert (
        check_one_call(d, {"f": {"a": 1, "z": 1}}, expected, PY).error_type
        == "simple_function_checker:unexpected_param"
    )
    assert (
        check_one_call(d, {"f": {"a": 1}}, expected, PY).error_type
        == "simple_function_checker:missing_optional"
    )
    assert check_one_call(d, {"f": {"a": 1, "c": 3}}, expected, PY).valid
    assert (
        check_one_call(d, {"g": {"a": 1}}, expected, PY).error_type
        == "simple_function_checker:wrong_func_name"
    )


def test_dotted_names_in_function_calling_mode():
    d = doc(name="a.b", x={"type": "integer"})
    expected = [{"a.b": {"x": [1]}}]
    fc = CheckOptions(underscore_to_dot=True)
    assert check_calls([d], [{"a_b": {"x": 1}}], expected, "simple", fc).valid
    result = check_calls([d], [{"a_b": {"x": 1}}], expected, "simple", PY)
    assert result.error_type == "simple_function_checker:wrong_func_name"


def test_call_counts():
    d = doc(x={"type": "integer"})
    expected = [{"f": {"x": [1]}}]
    assert (
        check_calls([d], [], expected, "simple", PY).error_type
        == "simple_function_checker:wrong_count"
    )
    assert (
        check_calls([d], [], expected, "multiple", PY).error_type
        == "multiple_function_checker:wrong_count"
    )
    assert (
        check_calls([d], [], expected, "parallel", PY).error_type
        == "parallel_function_checker_no_order:wrong_count"
    )


def test_parallel_matching_is_order_free():
    d = doc(x={"type": "integer"})
    expected = [{"f": {"x": [1]}}, {"f": {"x": [2]}}]
    assert check_calls([d], [{"f": {"x": 2}}, {"f": {"x": 1}}], expected, "parallel", PY).valid


def test_parallel_matching_is_greedy_first_fit():
    d = doc(x={"type": "string"})
    expected = [{"f": {"x": ["a", ""]}}, {"f": {"x": ["a"]}}]
    failing = check_calls([d], [{"f": {"x": "a"}}, {"f": {}}], expected, "parallel", PY)
    assert failing.error_type == "parallel_function_checker_no_order:cannot_find_match"
    assert failing.errors[0].startswith("Could not find a matching function among index [1]")
    assert "Model Result Index 1" in failing.errors[1]
    assert check_calls([d], [{"f": {}}, {"f": {"x": "a"}}], expected, "parallel", PY).valid


def test_standardize():
    assert standardize("April 1, 2024") == standardize("april 1 2024") == "april12024"
    assert standardize("It's a_b-c/d*e^f.") == 'it"sabcdef'
