"""The calculator: results, error texts, bounded work."""

from __future__ import annotations

from backend_helpers import env_for, run


def test_math_results_and_errors():
    env = env_for("MathAPI")
    assert env.execute(["logarithm(value=36.0, base=6.0, precision=4)"]) == [
        "{'result': mpf('2.0')}"
    ]
    assert env.execute(["square_root(16, 5)", "square_root(-1, 5)"]) == [
        "{'result': Decimal('4')}",
        '{"error": "Cannot calculate square root of a negative number"}',
    ]
    assert run(
        env,
        "add(2, 3)",
        "subtract(2, 3.5)",
        "multiply(2, 'x')",
        "divide(1, 0)",
        "divide(9, 3)",
        "power(2, 10)",
        "add('a', 1)",
    ) == [
        {"result": 5},
        {"result": -1.5},
        {"error": "Both inputs must be numbers"},
        {"error": "Cannot divide by zero"},
        {"result": 3.0},
        {"result": 1024},
        {"error": "Both inputs must be numbers"},
    ]
    assert run(env, "mean([1, 2, 3])", "mean([])", "mean(['a'])") == [
        {"result": 2.0},
        {"error": "Cannot calculate mean of an empty list"},
        {"error": "All elements in the list must be numbers"},
    ]
    assert run(env, "standard_deviation([2, 4, 4, 4, 5, 5, 7, 9])", "standard_deviation([])") == [
        {"result": 2.0},
        {"error": "Cannot calculate standard deviation of an empty list"},
    ]
    assert run(
        env,
        "si_unit_conversion(1, 'km', 'm')",
        "si_unit_conversion('1', 'km', 'm')",
        "si_unit_conversion(1, 'km', 'mile')",
    ) == [
        {"result": 1000.0},
        {"error": "Value must be a number"},
        {"error": "Conversion from 'km' to 'mile' is not supported"},
    ]
    assert run(
        env,
        "imperial_si_conversion(100, 'celsius', 'fahrenheit')",
        "imperial_si_conversion(2, 'kg', 'kg')",
        "imperial_si_conversion(1, 'in', 'cm')",
        "imperial_si_conversion(1, 'kg', 'cm')",
    ) == [
        {"result": 212.0},
        {"result": 2},
        {"result": 2.54},
        {"error": "Conversion from 'kg' to 'cm' is not supported"},
    ]
    assert run(
        env,
        "absolute_value(-3)",
        "round_number(2.5)",
        "round_number(2.675, 2)",
        "round_number('x')",
        "percentage(1, 4)",
        "percentage(1, 0)",
    ) == [
        {"result": 3},
        {"result": 2},
        {"result": 2.67},
        {"error": "First input must be a number, second input must be an integer"},
        {"result": 25.0},
        {"error": "Whole value cannot be zero"},
    ]
    assert run(env, "min_value([3, 1])", "max_value([3, 1])", "sum_values([3, 1])") == [
        {"result": 1},
        {"result": 3},
        {"result": 4},
    ]
    assert run(env, "min_value([])", "max_value([])", "sum_values([1, 'a'])") == [
        {"error": "Cannot find minimum of an empty list"},
        {"error": "Cannot find maximum of an empty list"},
        {"error": "All elements in the list must be numbers"},
    ]


def test_math_refuses_unbounded_work():
    env = env_for("MathAPI")
    assert "error" in run(env, "logarithm(10, 2, 1000000000)")[0]
    assert "error" in run(env, "square_root(2, 1000000000)")[0]
    assert run(env, "power(10, 100000000)") == [{"error": "Result too large to compute"}]
