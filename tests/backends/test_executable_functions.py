"""The executable categories' functions against examples worked out by hand, their argument
bounds, and hostile calls through the safe executor."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import pytest

from pytest_bfcl.backends.executable import ExecRefused, ExecutableAPI
from pytest_bfcl.check.executable import exec_environment, run_call


@pytest.fixture
def api() -> ExecutableAPI:
    return ExecutableAPI()


# -- pure computations, by hand -----------------------------------------------------------------

EXAMPLES = [
    ("calc_binomial_probability", {"n": 2, "k": 1, "p": 0.5}, 0.5),
    ("calc_binomial_probability", {"n": 3, "k": 0, "p": 0.5}, 0.125),
    ("calculate_cosine_similarity", {"vectorA": [1, 0], "vectorB": [0, 1]}, 0.0),
    ("calculate_cosine_similarity", {"vectorA": [1, 2], "vectorB": [2, 4]}, 1.0),
    ("calculate_slope", {"x": [1, 2, 3], "y": [2, 4, 6]}, 2.0),
    ("calculate_intercept", {"x": [1, 2, 3], "y": [4, 5, 6], "slope": 1}, 3.0),
    ("linear_regression", {"x": [1, 2, 3], "y": [4, 5, 6], "point": 10}, 13.0),
    ("predict_value", {"slope": 2, "intercept": 1, "x": 3}, 7),
    ("get_prime_factors", {"number": 360}, [2, 2, 2, 3, 3, 5]),
    ("get_prime_factors", {"number": 4567}, [4567]),
    ("get_prime_factors", {"number": 1}, []),
    ("get_fibonacci_number", {"n": 1}, 0),
    ("get_fibonacci_number", {"n": 2}, 1),
    ("get_fibonacci_number", {"n": 10}, 34),
    ("get_fibonacci_sequence", {"n": 5}, [0, 1, 1, 2, 3]),
    ("mat_mul", {"matA": [[1, 2], [3, 4]], "matB": [[5, 6], [7, 8]]}, [[19, 22], [43, 50]]),
    ("math_factorial", {"n": 7}, 5040),
    ("math_gcd", {"a": 450, "b": 300}, 150),
    ("math_lcm", {"a": 24, "b": 18}, 72),
    ("calculate_permutations", {"n": 5, "k": 2}, 20),
    ("add_binary_numbers", {"a": "0011", "b": "1100"}, "1111"),
    ("add_binary_numbers", {"a": "10011", "b": "1100"}, "11111"),
    ("convert_binary_to_decimal", {"binary": "1010"}, 10),
    ("convert_decimal_to_hex", {"decimal": 255}, "ff"),
    ("calculate_density", {"mass": 50, "volume": 10}, 5.0),
    ("calculate_displacement", {"initial_velocity": 15, "acceleration": 10, "time": 10}, 650.0),
    ("calculate_final_velocity", {"initial_velocity": 1, "acceleration": 2, "time": 3}, 7),
    ("calculate_electrostatic_potential_energy", {"charge": 5.0, "voltage": 10.0}, 50.0),
    ("calculate_future_value", {"present_value": 1000, "interest_rate": 0.5, "periods": 2}, 2250.0),
    ("calculate_mean", {"numbers": [1, 2, 3, 4]}, 2.5),
    ("calculate_standard_deviation", {"numbers": [2, 4, 4, 4, 5, 5, 7, 9]}, 2.0),
    ("calculate_triangle_area", {"base": 500, "height": 300}, 75000.0),
    ("geometry_area_circle", {"radius": 2}, 4 * math.pi),
    ("get_distance", {"pointA": (0, 0), "pointB": (3, 4)}, 5.0),
    ("polygon_area", {"vertices": [[0, 0], [4, 0], [4, 3]]}, 6.0),
    ("polygon_area", {"vertices": [[0, 0], [1, 0], [1, 1], [0, 1]]}, 1.0),
    ("validate_polygon", {"vertices": [[0, 0], [1, 0], [1, 1]]}, True),
    ("validate_polygon", {"vertices": [[0, 0], [1, 1], [2, 2]]}, False),
    ("convert_coordinates", {"coordinates": [(1, 2), (3, 4)]}, [[1, 2], [3, 4]]),
    ("maxPoints", {"points": [[1, 1], [2, 2], [3, 3], [1, 2]]}, 3),
    ("maxPoints", {"points": [[1, 2], [3, 2], [5, 2], [4, 2]]}, 4),
    ("maxPoints", {"points": [[0, 0], [1, 1], [0, 1], [1, 0]]}, 2),
    ("quadratic_roots", {"a": 1, "b": -3, "c": 2}, [2.0, 1.0]),
    (
        "quadratic_roots",
        {"a": 1, "b": 0, "c": 1},
        [{"real": 0.0, "imaginary": 1.0}, {"real": 0.0, "imaginary": -1.0}],
    ),
    ("sort_array", {"array": [3, 1, 2]}, [1, 2, 3]),
    ("sort_array", {"array": [3, 1, 2], "reverse": True}, [3, 2, 1]),
    ("mortgage_calculator", {"loan_amount": 1200, "interest_rate": 0, "loan_period": 1}, 100.0),
    ("convert_temperature", {"temperature": 100, "unit_from": "Celsius", "unit_to": "F"}, 212.0),
    ("convert_temperature", {"temperature": 32, "unit_from": "F", "unit_to": "C"}, 0.0),
    (
        "calculate_basal_metabolic_rate",
        {"weight": 70, "height": 175, "age": 25, "gender": "male"},
        1673.75,
    ),
    (
        "calculate_daily_energy_expenditure",
        {"basal_metabolic_rate": 1000, "activity_level": 1},
        1200.0,
    ),
    (
        "compound_interest",
        {"principal": 1000, "rate": 0.1, "times_compounded": 1, "years": 2},
        210.0,
    ),
    ("inflation_adjustment", {"amount": 100, "inflation_rate": 0.1, "years": 2}, 121.0),
    (
        "adjust_for_inflation",
        {"investment_value": 121, "inflation_rates": [0.1, 0.1]},
        [110.0, 100.0],
    ),
    ("calculate_interest_rate", {"principal": 1000, "rate": 0.05, "time": 2}, 100.0),
    ("calculate_total", {"quantities": [2, 3], "prices": [1.5, 2]}, 9.0),
    ("order_food", {"item": ["a", "b"], "quantity": [2, 3], "price": [1.5, 2]}, 9.0),
    ("apply_discount", {"total": 200, "discount": 10}, 180.0),
    ("calculate_total_price", {"room_price": 100, "nights": 3, "discount": 50}, 250),
    ("estimate_derivative", {"function": "lambda x: 3*x**2 + 2*x + 1", "x": 5}, 32.0),
    ("estimate_derivative", {"function": "lambda x : x**3", "x": 2}, 12.0),
    ("estimate_derivative", {"function": "lambda t: math.sin(t)", "x": 0}, 1.0),
]


@pytest.mark.parametrize(("name", "args", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_function_by_hand(api: ExecutableAPI, name: str, args: dict, expected: object) -> None:
    result = getattr(api, name)(**args)
    if isinstance(expected, float):
        assert result == pytest.approx(expected, rel=1e-9, abs=1e-9)
    elif isinstance(expected, list) and expected and isinstance(expected[0], float):
        assert result == pytest.approx(expected)
    else:
        assert result == expected


def test_mortgage_with_interest(api: ExecutableAPI) -> None:
    # The textbook case: 100,000 at 6 % over 30 years pays 599.55 a month.
    assert api.mortgage_calculator(100_000, 0.06, 30) == pytest.approx(599.55, abs=0.005)


def test_investment_value_by_year(api: ExecutableAPI) -> None:
    # Year 1: 1000 * 1.1 + 100 = 1200; year 2: 1200 * 1.1 + 100 = 1420 (no inflation).
    assert api.calculate_investment_value(1000, 100, 2, 0.1, [0, 0]) == pytest.approx(1420.0)
    # Deflated by 10 % after year 1: 1200 / 1.1.
    assert api.calculate_investment_value(1000, 100, 1, 0.1, [0.1]) == pytest.approx(1200 / 1.1)


def test_nutritional_needs_split(api: ExecutableAPI) -> None:
    # BMR 1673.75 x 1.2 - 500 = 1508.5 kcal; protein 30 % / 4 kcal per gram.
    needs = api.calculate_nutritional_needs(70, 175, 25, "male", 1, "lose")
    assert needs["calories"] == pytest.approx(1508.5)
    assert needs["proteins_g"] == pytest.approx(1508.5 * 0.3 / 4)


def test_booking(api: ExecutableAPI) -> None:
    booking = api.book_room("deluxe", "08-11-2024", "08-15-2024", "123", price=1000)
    assert booking["nights"] == 4 and booking["total_price"] == 4000
    assert "customer 123" in api.confirm_booking("123", "12A", 99.5)


def test_random_number_is_reproducible_per_instance() -> None:
    first = ExecutableAPI().generate_random_number(1, 100)
    assert first == ExecutableAPI().generate_random_number(1, 100)
    assert 1 <= first <= 100


def test_binomial_large_n_uses_logs(api: ExecutableAPI) -> None:
    value = api.calc_binomial_probability(100_000, 50_000, 0.5)
    assert value == pytest.approx(math.sqrt(2 / (math.pi * 100_000)), rel=1e-3)


def test_equivalent_lambdas_agree(api: ExecutableAPI) -> None:
    a = api.estimate_derivative("lambda x: 3*x**2 + 2*x - 1", 5)
    b = api.estimate_derivative("lambda x: x*x*3 + x + x - 1", 5)
    assert a == b == 32.0


# -- bounds -------------------------------------------------------------------------------------

REFUSED = [
    ("get_fibonacci_number", {"n": 10**9}),
    ("get_fibonacci_number", {"n": 0}),
    ("get_fibonacci_sequence", {"n": 10**7}),
    ("math_factorial", {"n": 10**6}),
    ("math_factorial", {"n": -1}),
    ("calculate_permutations", {"n": 10**9, "k": 5}),
    ("get_prime_factors", {"number": 10**15}),
    ("calc_binomial_probability", {"n": 10, "k": 11, "p": 0.5}),
    ("calc_binomial_probability", {"n": 10, "k": 1, "p": 1.5}),
    ("calc_binomial_probability", {"n": 10**12, "k": 1, "p": 0.5}),
    ("mat_mul", {"matA": [[1] * 200] * 200, "matB": [[1] * 200] * 200}),
    ("mat_mul", {"matA": [[1, 2]], "matB": [[1, 2]]}),
    ("mat_mul", {"matA": [[1, 2], [3]], "matB": [[1], [2]]}),
    ("maxPoints", {"points": [[i, i] for i in range(1000)]}),
    ("calculate_mean", {"numbers": list(range(200_000))}),
    ("calculate_mean", {"numbers": []}),
    ("calculate_mean", {"numbers": ["1", "2"]}),
    ("calculate_density", {"mass": 1, "volume": 0}),
    ("calculate_cosine_similarity", {"vectorA": [0, 0], "vectorB": [1, 1]}),
    ("calculate_cosine_similarity", {"vectorA": [1, 2], "vectorB": [1]}),
    ("calculate_slope", {"x": [1, 1], "y": [1, 2]}),
    ("quadratic_roots", {"a": 0, "b": 1, "c": 1}),
    ("add_binary_numbers", {"a": "12", "b": "1"}),
    ("convert_temperature", {"temperature": 1, "unit_from": "Kelvin", "unit_to": "C"}),
    ("calculate_future_value", {"present_value": 1, "interest_rate": 0.1, "periods": 10**9}),
    (
        "book_room",
        {
            "room_type": "x",
            "check_in_date": "08-15-2024",
            "check_out_date": "08-11-2024",
            "customer_id": "1",
        },
    ),
    (
        "calculate_nutritional_needs",
        {
            "weight": 70,
            "height": 175,
            "age": 25,
            "gender": "male",
            "activity_level": 9,
            "goal": "lose",
        },
    ),
    ("estimate_derivative", {"function": "__import__('os').system('true')", "x": 1}),
    ("estimate_derivative", {"function": "lambda x: __import__('os')", "x": 1}),
    ("estimate_derivative", {"function": "lambda x: x.__class__", "x": 1}),
    ("estimate_derivative", {"function": "lambda x: x ** 10 ** 10", "x": 2}),
    ("estimate_derivative", {"function": "lambda x: (x ** 500) ** 500", "x": 10}),
    ("estimate_derivative", {"function": "lambda x: " + "+".join(["x"] * 300), "x": 1}),
    ("estimate_derivative", {"function": "lambda x, y: x", "x": 1}),
]


@pytest.mark.parametrize(("name", "args"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_quickly(api: ExecutableAPI, name: str, args: dict) -> None:
    started = time.monotonic()
    with pytest.raises(ExecRefused):
        getattr(api, name)(**args)
    assert time.monotonic() - started < 2


def test_largest_allowed_values_stay_printable(api: ExecutableAPI) -> None:
    started = time.monotonic()
    str(api.math_factorial(1000))
    str(api.get_fibonacci_number(20_000))
    api.get_prime_factors(999_999_999_989)  # a prime near the bound: the slowest case
    api.maxPoints([[i, i * i] for i in range(500)])
    assert time.monotonic() - started < 5


# -- hostile calls through the executor ---------------------------------------------------------

HOSTILE = [
    "__import__('os').system('echo hacked')",
    "eval('1+1')",
    "exec('x=1')",
    "open('/etc/passwd')",
    "os.system('true')",
    "math_factorial.__globals__",
    "math_factorial(n=__import__('os'))",
    "ExecutableAPI._api(url='http://127.0.0.1')",
    "_api(url='http://127.0.0.1')",
    "math_factorial(n=10**100000)",
    "get_fibonacci_number(n=10**9)",
    "math_factorial(n=math_factorial(n=1000))",
    "calculate_mean(numbers=[1]*10**8)",
    "unknown_function(a=1)",
    "kill(pid=1)",
    "math_factorial(" * 50 + "n=3" + ")" * 50,
    "math_factorial(n=(lambda: 3)())",
    "math_factorial(**{'n': 3})",
    "calculate_mean(numbers=[" + "[" * 300 + "]" * 300 + "])",
    "math_factorial(n=3); math_factorial(n=4)",
]


@pytest.mark.parametrize("call", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_call_is_an_error_result(call: str) -> None:
    started = time.monotonic()
    outcome = run_call(exec_environment(), call)
    assert outcome.error is not None and outcome.value is None
    assert time.monotonic() - started < 2


def test_nested_calls_of_the_functions_run() -> None:
    outcome = run_call(exec_environment(), "math_factorial(n=math_gcd(a=12, b=8))")
    assert outcome.value == 24


def test_literal_arithmetic_in_arguments() -> None:
    env = exec_environment()
    assert run_call(env, "calc_binomial_probability(n=2, k=1, p=1/2)").value == 0.5
    assert run_call(env, "calculate_mean([1, 3, 4, 6, 8])").value == 4.4


# -- web-backed functions, against the local simulated APIs -------------------------------------

WEB_EXAMPLES = [
    ("convert_currency", {"amount": 100, "from_currency": "USD", "to_currency": "EUR"}, 90.0),
    ("find_term_on_urban_dictionary", {"term": "lit"}, "[lit] means something"),
    ("get_active_covid_case_by_country", {"country": "Chad"}, 1000 * sum(map(ord, "Chad"))),
    ("get_covid_death_by_country", {"country": "Chad"}, 100 * sum(map(ord, "Chad"))),
    ("get_company_name_by_stock_name", {"stock_name": "aapl"}, "AAPL Inc."),
    ("get_stock_price_by_stock_name", {"stock_name": "AAPL"}, 100.5),
    ("get_coordinate_by_ip_address", {"ip_address": "192.168.1.1"}, "private range"),
    ("get_coordinate_by_ip_address", {"ip_address": "8.8.8.8"}, [37.4, -122.1]),
    ("get_zipcode_by_ip_address", {"ip_address": "8.8.8.8"}, "94043"),
    ("get_coordinates_from_city", {"city_name": "Paris"}, ["48.8588897", "2.3200410217200766"]),
    ("get_time_zone_by_coord", {"long": "2.35", "lat": "48.85"}, "Etc/GMT"),
    ("get_weather_data", {"coordinates": [48.85, 2.35]}, 12.5),
    ("get_price_by_amazon_ASIN", {"ASIN": "B08PPDJWC8"}, "$10.00"),
    ("get_product_name_by_amazon_ASIN", {"ASIN": "B08PPDJWC8"}, "Product B08PPDJWC8"),
    ("get_rating_by_amazon_ASIN", {"ASIN": "B08PPDJWC8"}, "4.5"),
    ("retrieve_city_based_on_zipcode", {"zipcode": "90210"}, "BEVERLY HILLS"),
    ("get_movie_director", {"movie_name": "Avatar"}, "A. Director"),
    ("get_director_by_movie_name", {"movie_name": "Avatar"}, "A. Director"),
    ("get_movie_rating", {"movie_name": "Avatar"}, "PG-13"),
    ("get_movie_genre", {"movie_name": "Avatar"}, "Drama"),
]


@pytest.fixture(scope="module")
def api_base() -> Iterator[str]:
    from pytest_bfcl.testing.exec_api_server import ApiServer, serve

    with serve(ApiServer()) as base:
        yield base


@pytest.fixture
def web_api(monkeypatch, api_base: str) -> ExecutableAPI:
    from pytest_bfcl.backends.base import BackendServices
    from pytest_bfcl.testing.exec_api_server import FAKE_KEYS
    from pytest_bfcl.web.access import WebAccess, WebSettings

    monkeypatch.setenv("BFCL_EXEC_API_BASE", api_base)
    for variable, key in FAKE_KEYS.items():
        monkeypatch.setenv(variable, key)
    api = ExecutableAPI()
    api._services = BackendServices(web=WebAccess(WebSettings(mode="live")))
    return api


@pytest.mark.parametrize(
    ("name", "args", "expected"), WEB_EXAMPLES, ids=[w[0] for w in WEB_EXAMPLES]
)
def test_web_function(web_api: ExecutableAPI, name: str, args: dict, expected: object) -> None:
    assert getattr(web_api, name)(**args) == expected


def test_web_function_shapes(web_api: ExecutableAPI) -> None:
    assert set(web_api.get_stock_history("AAPL", "1mo", "true")) == {"1690862400", "1693540800"}
    holidays = web_api.retrieve_holiday_by_year("2010", "fr")
    assert holidays[0]["countryCode"] == "FR"


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("get_coordinate_by_ip_address", {"ip_address": "../../admin"}),
        ("convert_currency", {"amount": 1, "from_currency": "EURO/../x", "to_currency": "USD"}),
        ("retrieve_city_based_on_zipcode", {"zipcode": "90210/../../x"}),
        ("retrieve_holiday_by_year", {"year": "20x0", "country": "FR"}),
        ("get_price_by_amazon_ASIN", {"ASIN": "not-an-asin"}),
        ("get_stock_history", {"stock_name": "AAPL", "interval": "1y"}),
        ("get_time_zone_by_coord", {"long": "500", "lat": "0"}),
        ("get_weather_data", {"coordinates": [1, 2, 3]}),
    ],
)
def test_web_arguments_are_checked_before_any_request(api: ExecutableAPI, name, args) -> None:
    with pytest.raises(ExecRefused):
        getattr(api, name)(**args)  # no web access here: a request would fail differently
