"""The 72 functions of the executable categories (``exec_*``), as the public methods of one
backend, written from their docs in the data and the ordinary maths, finance and physics.

Calls reach these methods only through the safe executor (a parsed call, a name looked up
among the public methods, literal arguments). Every argument is checked and bounded, so that a
model's call ends in bounded time and memory (the 10**9-th Fibonacci number is refused, not
computed); a refusal raises :class:`ExecRefused`, which the executor turns into an error
result. Functions that need a public API go through :mod:`pytest_bfcl.backends.exec_api`.
"""

from __future__ import annotations

import ast
import ipaddress
import math
import random
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar
from urllib.parse import quote

from pytest_bfcl.backends.base import Backend
from pytest_bfcl.backends.exec_api import ApiClient, ApiRequest, ApiUnavailable
from pytest_bfcl.decode.limits import MAX_INT_BITS

MAX_ITEMS = 100_000  # elements of a list argument
MAX_FACTORIAL = 1_500  # 1500! has about 4,100 digits: still printable
MAX_FIBONACCI = 20_000  # F(20000) has about 13,900 bits
MAX_SEQUENCE = 1_000  # Fibonacci numbers in one sequence
MAX_PRIME_INPUT = 10**12  # trial division up to 10**6
MAX_MATRIX = 100  # rows, columns and inner dimension of mat_mul
MAX_POINTS = 500  # maxPoints is quadratic
MAX_BINOMIAL_N = 10**6
MAX_YEARS = 1_000
MAX_LAMBDA_CHARS = 500
MAX_LAMBDA_NODES = 200
DERIVATIVE_STEP = 1e-5
DERIVATIVE_DIGITS = 4  # central differences, rounded so equivalent expressions agree

RAPID = "YOUR-RAPID-API-KEY"
ACTIVITY_FACTORS = {1: 1.2, 2: 1.375, 3: 1.55, 4: 1.725, 5: 1.9}
GOAL_CALORIES = {"lose": -500.0, "maintain": 0.0, "gain": 500.0}
GENDER_OFFSETS = {"male": 5.0, "female": -161.0, "other": -78.0}


class ExecRefused(ValueError):
    """An argument the function cannot or will not compute with; the message is the result."""


# -- argument checks ----------------------------------------------------------------------------


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExecRefused(f"{name} must be a number, not {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExecRefused(f"{name} must be finite")
    if isinstance(value, int) and value.bit_length() > 1024:
        raise ExecRefused(f"{name} is too large")
    return value


def _integer(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExecRefused(f"{name} must be an integer, not {type(value).__name__}")
    if low is not None and value < low:
        raise ExecRefused(f"{name} must be at least {low}, not {value}")
    if high is not None and value > high:
        raise ExecRefused(f"{name} must be at most {high:,}, not {value}")
    return value


def _numbers(name: str, value: Any, minimum: int = 0) -> list[float]:
    if not isinstance(value, list | tuple):
        raise ExecRefused(f"{name} must be a list of numbers, not {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise ExecRefused(f"{name} has {len(value):,} elements; at most {MAX_ITEMS:,}")
    if len(value) < minimum:
        raise ExecRefused(f"{name} needs at least {minimum} elements")
    return [_number(f"{name}[{i}]", v) for i, v in enumerate(value)]


def _points(name: str, value: Any, limit: int = MAX_ITEMS) -> list[tuple[float, float]]:
    if not isinstance(value, list | tuple) or len(value) > limit:
        raise ExecRefused(f"{name} must be a list of at most {limit:,} [x, y] points")
    out = []
    for i, point in enumerate(value):
        coords = _numbers(f"{name}[{i}]", point)
        if len(coords) != 2:
            raise ExecRefused(f"{name}[{i}] must have two coordinates")
        out.append((coords[0], coords[1]))
    return out


def _text(name: str, value: Any, limit: int = 200) -> str:
    if not isinstance(value, str):
        raise ExecRefused(f"{name} must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise ExecRefused(f"{name} is longer than {limit} characters")
    return value


def _same_length(*lists: list[Any]) -> None:
    if len({len(x) for x in lists}) > 1:
        raise ExecRefused("the lists must have the same length")


def _bounded_int(value: int) -> int:
    if value.bit_length() > MAX_INT_BITS:
        raise ExecRefused(f"the result has more than {MAX_INT_BITS:,} bits")
    return value


def _mean(values: list[float]) -> float:
    if not values:
        raise ExecRefused("the list is empty")
    return sum(values) / len(values)


def _slope(x: list[float], y: list[float]) -> float:
    _same_length(x, y)
    mx, my = _mean(x), _mean(y)
    spread = sum((a - mx) ** 2 for a in x)
    if spread == 0:
        raise ExecRefused("the x coordinates are all equal: the slope is undefined")
    return sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / spread


def _bmr(weight: Any, height: Any, age: Any, gender: Any) -> float:
    # Mifflin-St Jeor; "other" takes the midpoint of the two offsets.
    offset = GENDER_OFFSETS.get(_text("gender", gender).lower())
    if offset is None:
        raise ExecRefused(f"gender must be one of {', '.join(GENDER_OFFSETS)}")
    w, h, a = _number("weight", weight), _number("height", height), _number("age", age)
    return 10 * w + 6.25 * h - 5 * a + offset


def _activity(level: Any) -> float:
    factor = ACTIVITY_FACTORS.get(_integer("activity_level", level))
    if factor is None:
        raise ExecRefused("activity_level must be 1, 2, 3, 4 or 5")
    return factor


# -- lambda expressions (estimate_derivative) ---------------------------------------------------

_LAMBDA_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "exp": math.exp,
    "log": math.log,
    "sqrt": math.sqrt,
    "abs": abs,
}
_LAMBDA_CONSTANTS = {"pi": math.pi, "e": math.e}


def parse_lambda(source: str) -> tuple[str, ast.expr]:
    """``lambda x: <arithmetic>`` as (parameter, body); anything else is refused. The body is
    interpreted by :func:`_eval_lambda`, never evaluated as code."""
    text = _text("function", source, MAX_LAMBDA_CHARS).strip()
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ExecRefused(f"function is not a lambda expression: {text[:80]!r}") from None
    if not isinstance(tree, ast.Lambda) or len(tree.args.args) != 1 or tree.args.vararg:
        raise ExecRefused("function must be a lambda of one argument, e.g. 'lambda x: x**2'")
    if sum(1 for _ in ast.walk(tree)) > MAX_LAMBDA_NODES:
        raise ExecRefused("function is too long")
    return tree.args.args[0].arg, tree.body


def _eval_lambda(node: ast.expr, param: str, x: float) -> float:
    if isinstance(node, ast.Constant) and _is_real(node.value):
        return float(node.value)  # type: ignore[arg-type]  # a real number, checked above
    if isinstance(node, ast.Name):
        if node.id == param:
            return x
        if node.id in _LAMBDA_CONSTANTS:
            return _LAMBDA_CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _eval_lambda(node.operand, param, x)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        return _binary(node, param, x)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = _function_name(node.func)
        if name in _LAMBDA_FUNCTIONS:
            return float(_LAMBDA_FUNCTIONS[name](_eval_lambda(node.args[0], param, x)))
    raise ExecRefused(f"unsupported expression in function: {ast.unparse(node)[:80]}")


def _is_real(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _function_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id in ("math", "np", "numpy") else None
    return None


def _binary(node: ast.BinOp, param: str, x: float) -> float:
    left = _eval_lambda(node.left, param, x)
    right = _eval_lambda(node.right, param, x)
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, ast.Mult):
        return left * right
    if isinstance(node.op, ast.Div):
        return left / right
    if isinstance(node.op, ast.Pow):
        if abs(right) > 1_000:
            raise ExecRefused("exponents in function are limited to 1000")
        result = left**right  # floats: overflow raises, never a huge integer
        if isinstance(result, complex):
            raise ExecRefused("the function is not real-valued here")
        return result
    raise ExecRefused(f"unsupported operator in function: {type(node.op).__name__}")


# -- the backend --------------------------------------------------------------------------------


class ExecutableAPI(Backend):
    """The executable categories' functions. Stateless: every call is independent."""

    STATELESS: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self._random = random.Random(0)  # generate_random_number: reproducible per entry

    # -- web ------------------------------------------------------------------------------------

    def _api(self, url: str, params: dict[str, Any] | None = None, rapid: bool = False) -> Any:
        """The JSON body of a GET; an HTTP error status is refused with its code."""
        headers = {}
        if rapid:
            headers = {"X-RapidAPI-Key": RAPID, "X-RapidAPI-Host": url.split("/")[2]}
        client = ApiClient(self._services.web)
        response = client.get(ApiRequest(url, params or {}, headers))
        if response.status >= 400:
            raise ExecRefused(f"the API answered HTTP {response.status}")
        return response.body

    @staticmethod
    def _pick(body: Any, *path: str | int) -> Any:
        """``body[path[0]][path[1]]...``; a missing step is a readable refusal."""
        current = body
        for step in path:
            current = _step_into(current, step)
        return current

    # -- arithmetic and number theory -----------------------------------------------------------

    def add_binary_numbers(self, a: str, b: str) -> str:
        digits = []
        for name, value in (("a", a), ("b", b)):
            text = _text(name, value, 10_000)
            if not text or set(text) - {"0", "1"}:
                raise ExecRefused(f"{name} must be a binary number, not {text[:40]!r}")
            digits.append(int(text, 2))
        return bin(digits[0] + digits[1])[2:]

    def convert_binary_to_decimal(self, binary: str) -> int:
        text = _text("binary", binary, 10_000)
        if not text or set(text) - {"0", "1"}:
            raise ExecRefused(f"binary must be a binary number, not {text[:40]!r}")
        return int(text, 2)

    def convert_decimal_to_hex(self, decimal: int) -> str:
        return format(_integer("decimal", decimal), "x")

    def math_factorial(self, n: int) -> int:
        return math.factorial(_integer("n", n, 0, MAX_FACTORIAL))

    def math_gcd(self, a: int, b: int) -> int:
        return math.gcd(_integer("a", a), _integer("b", b))

    def math_lcm(self, a: int, b: int) -> int:
        return math.lcm(_integer("a", a), _integer("b", b))

    def calculate_permutations(self, n: int, k: int) -> int:
        n = _integer("n", n, 0, 10_000)
        k = _integer("k", k, 0, n)
        return _bounded_int(math.perm(n, k))

    def get_fibonacci_number(self, n: int) -> int:
        """1-based: the first number is 0, the second 1."""
        n = _integer("n", n, 1, MAX_FIBONACCI)
        a, b = 0, 1
        for _ in range(n - 1):
            a, b = b, a + b
        return a

    def get_fibonacci_sequence(self, n: int) -> list[int]:
        n = _integer("n", n, 0, MAX_SEQUENCE)
        out, a, b = [], 0, 1
        for _ in range(n):
            out.append(a)
            a, b = b, a + b
        return out

    def get_prime_factors(self, number: int) -> list[int]:
        """With multiplicity, ascending (12 -> [2, 2, 3])."""
        n = _integer("number", number, 1, MAX_PRIME_INPUT)
        factors, divisor = [], 2
        while divisor * divisor <= n:
            while n % divisor == 0:
                factors.append(divisor)
                n //= divisor
            divisor += 1 if divisor == 2 else 2
        if n > 1:
            factors.append(n)
        return factors

    def calc_binomial_probability(self, n: int, k: int, p: float) -> float:
        n = _integer("n", n, 0, MAX_BINOMIAL_N)
        k = _integer("k", k, 0, n)
        p = _number("p", p)
        if not 0 <= p <= 1:
            raise ExecRefused("p must be between 0 and 1")
        if n <= 1_000:
            return math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if p in (0, 1):
            return float(k == (0 if p == 0 else n))
        log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        return math.exp(log + k * math.log(p) + (n - k) * math.log1p(-p))

    # -- statistics and geometry ----------------------------------------------------------------

    def calculate_mean(self, numbers: list[float]) -> float:
        return _mean(_numbers("numbers", numbers))

    def calculate_standard_deviation(self, numbers: list[float]) -> float:
        """Population standard deviation."""
        values = _numbers("numbers", numbers, 1)
        mean = _mean(values)
        return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))

    def calculate_cosine_similarity(self, vectorA: list[float], vectorB: list[float]) -> float:
        a, b = _numbers("vectorA", vectorA, 1), _numbers("vectorB", vectorB, 1)
        _same_length(a, b)
        norms = math.sqrt(sum(v * v for v in a)) * math.sqrt(sum(v * v for v in b))
        if norms == 0:
            raise ExecRefused("the cosine similarity of a zero vector is undefined")
        return sum(x * y for x, y in zip(a, b, strict=True)) / norms

    def calculate_slope(self, x: list[int], y: list[int]) -> float:
        return _slope(_numbers("x", x, 2), _numbers("y", y, 2))

    def calculate_intercept(self, x: list[int], y: list[int], slope: float) -> float:
        xs, ys = _numbers("x", x, 1), _numbers("y", y, 1)
        _same_length(xs, ys)
        return _mean(ys) - _number("slope", slope) * _mean(xs)

    def linear_regression(self, x: list[int], y: list[int], point: float) -> float:
        xs, ys = _numbers("x", x, 2), _numbers("y", y, 2)
        slope = _slope(xs, ys)
        return slope * _number("point", point) + (_mean(ys) - slope * _mean(xs))

    def predict_value(self, slope: float, intercept: float, x: float) -> float:
        return _number("slope", slope) * _number("x", x) + _number("intercept", intercept)

    def get_distance(self, pointA: list[float], pointB: list[float]) -> float:
        a, b = _numbers("pointA", pointA, 1), _numbers("pointB", pointB, 1)
        _same_length(a, b)
        return math.dist(a, b)

    def geometry_area_circle(self, radius: float) -> float:
        return math.pi * _number("radius", radius) ** 2

    def calculate_triangle_area(self, base: float, height: float) -> float:
        return 0.5 * _number("base", base) * _number("height", height)

    def polygon_area(self, vertices: list[list[float]]) -> float:
        """The shoelace formula."""
        points = _points("vertices", vertices)
        if len(points) < 3:
            raise ExecRefused("a polygon needs at least 3 vertices")
        twice = sum(
            x1 * y2 - x2 * y1
            for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1], strict=True)
        )
        return abs(twice) / 2

    def validate_polygon(self, vertices: list[list[float]]) -> bool:
        """At least 3 vertices, no two consecutive the same, not all on one line."""
        points = _points("vertices", vertices)
        if len(points) < 3 or len(set(points)) < len(points):
            return False
        return self.polygon_area([list(p) for p in points]) > 0

    def convert_coordinates(self, coordinates: list[list[float]]) -> list[list[float]]:
        return [list(p) for p in _points("coordinates", coordinates)]

    def maxPoints(self, points: list[list[int]]) -> int:
        """The most points on one straight line (duplicates count on every line through them)."""
        pts = _points("points", points, MAX_POINTS)
        best = min(len(pts), 1)
        for i, (x1, y1) in enumerate(pts):
            slopes: dict[tuple[float, float], int] = {}
            same = 0
            for x2, y2 in pts[i + 1 :]:
                dx, dy = x2 - x1, y2 - y1
                if dx == 0 and dy == 0:
                    same += 1
                    continue
                key = _direction(dx, dy)
                slopes[key] = slopes.get(key, 0) + 1
            best = max(best, same + 1 + max(slopes.values(), default=0))
        return best

    def mat_mul(self, matA: list[list[float]], matB: list[list[float]]) -> list[list[float]]:
        a, b = _matrix("matA", matA), _matrix("matB", matB)
        if len(a[0]) != len(b):
            raise ExecRefused(f"cannot multiply a {len(a)}x{len(a[0])} by a {len(b)}x{len(b[0])}")
        columns = list(zip(*b, strict=True))
        return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in columns] for row in a]

    def quadratic_roots(self, a: float, b: float, c: float) -> list[Any]:
        """Two roots; complex ones as ``{"real", "imaginary"}``."""
        a, b, c = _number("a", a), _number("b", b), _number("c", c)
        if a == 0:
            raise ExecRefused("a must not be 0 in a quadratic equation")
        disc = b * b - 4 * a * c
        if disc >= 0:
            root = math.sqrt(disc)
            return [(-b + root) / (2 * a), (-b - root) / (2 * a)]
        real, imaginary = -b / (2 * a), math.sqrt(-disc) / (2 * abs(a))
        return [{"real": real, "imaginary": imaginary}, {"real": real, "imaginary": -imaginary}]

    def sort_array(self, array: list[float], reverse: bool = False) -> list[float]:
        if not isinstance(reverse, bool):
            raise ExecRefused("reverse must be true or false")
        return sorted(_numbers("array", array), reverse=reverse)

    def estimate_derivative(self, function: str, x: float) -> float:
        """Central difference, rounded to 4 decimals so that equivalent spellings agree."""
        param, body = parse_lambda(function)
        point = float(_number("x", x))
        h = DERIVATIVE_STEP * max(1.0, abs(point))
        try:
            slope = (
                _eval_lambda(body, param, point + h) - _eval_lambda(body, param, point - h)
            ) / (2 * h)
        except (OverflowError, ZeroDivisionError, ValueError) as exc:
            raise ExecRefused(f"the function cannot be evaluated near {point}: {exc}") from None
        return round(slope, DERIVATIVE_DIGITS)

    def generate_random_number(self, min: int, max: int) -> int:
        low, high = _integer("min", min), _integer("max", max)
        if low > high:
            raise ExecRefused("min must not exceed max")
        return self._random.randint(low, high)

    # -- physics --------------------------------------------------------------------------------

    def calculate_density(self, mass: float, volume: float) -> float:
        if _number("volume", volume) == 0:
            raise ExecRefused("volume must not be 0")
        return _number("mass", mass) / volume

    def calculate_displacement(
        self, initial_velocity: float, acceleration: float, time: float
    ) -> float:
        u, a = _number("initial_velocity", initial_velocity), _number("acceleration", acceleration)
        t = _number("time", time)
        return u * t + 0.5 * a * t**2

    def calculate_final_velocity(
        self, initial_velocity: float, acceleration: float, time: float
    ) -> float:
        u, a = _number("initial_velocity", initial_velocity), _number("acceleration", acceleration)
        return u + a * _number("time", time)

    def calculate_electrostatic_potential_energy(self, charge: float, voltage: float) -> float:
        return _number("charge", charge) * _number("voltage", voltage)

    def convert_temperature(self, temperature: float, unit_from: str, unit_to: str) -> float:
        t = _number("temperature", temperature)
        source, target = _unit(unit_from), _unit(unit_to)
        if source == target:
            return t
        return t * 9 / 5 + 32 if source == "c" else (t - 32) * 5 / 9

    # -- finance --------------------------------------------------------------------------------

    def calculate_future_value(
        self, present_value: float, interest_rate: float, periods: int
    ) -> float:
        n = _integer("periods", periods, 0, MAX_YEARS)
        return (
            _number("present_value", present_value)
            * (1 + _number("interest_rate", interest_rate)) ** n
        )

    def compound_interest(
        self, principal: float, rate: float, times_compounded: int, years: int
    ) -> float:
        """The interest earned (final amount minus principal)."""
        p, r = _number("principal", principal), _number("rate", rate)
        n = _integer("times_compounded", times_compounded, 1, 100_000)
        t = _integer("years", years, 0, MAX_YEARS)
        return p * (1 + r / n) ** (n * t) - p

    def inflation_adjustment(self, amount: float, inflation_rate: float, years: int) -> float:
        """What ``amount`` today costs after ``years`` of inflation."""
        t = _integer("years", years, 0, MAX_YEARS)
        return _number("amount", amount) * (1 + _number("inflation_rate", inflation_rate)) ** t

    def adjust_for_inflation(
        self, investment_value: float, inflation_rates: list[float]
    ) -> list[float]:
        """The value in today's money after each year."""
        value = _number("investment_value", investment_value)
        out = []
        for rate in _numbers("inflation_rates", inflation_rates)[:MAX_YEARS]:
            value /= 1 + rate
            out.append(value)
        return out

    def calculate_interest_rate(self, principal: float, rate: float, time: float) -> float:
        """Simple interest: principal x rate x time."""
        return _number("principal", principal) * _number("rate", rate) * _number("time", time)

    def calculate_investment_value(
        self,
        initial_investment: float,
        annual_contribution: float,
        years: int,
        annual_return: float,
        inflation_rate: list[float],
        adjust_for_inflation: bool = True,
    ) -> float:
        """Each year: grow by the return, add the contribution, then (optionally) deflate by
        that year's inflation."""
        value = _number("initial_investment", initial_investment)
        contribution = _number("annual_contribution", annual_contribution)
        growth = _number("annual_return", annual_return)
        n = _integer("years", years, 0, MAX_YEARS)
        rates = _numbers("inflation_rate", inflation_rate)
        if adjust_for_inflation and len(rates) < n:
            raise ExecRefused(f"inflation_rate needs one rate per year ({n})")
        for year in range(n):
            value = value * (1 + growth) + contribution
            if adjust_for_inflation:
                value /= 1 + rates[year]
        return value

    def mortgage_calculator(
        self, loan_amount: float, interest_rate: float, loan_period: int
    ) -> float:
        """The monthly payment of an annuity loan (annual rate, period in years)."""
        principal = _number("loan_amount", loan_amount)
        months = _integer("loan_period", loan_period, 1, MAX_YEARS) * 12
        monthly = _number("interest_rate", interest_rate) / 12
        if monthly == 0:
            return principal / months
        return principal * monthly / (1 - (1 + monthly) ** -months)

    def apply_discount(self, total: float, discount: float) -> float:
        """``discount`` in percent."""
        return _number("total", total) * (1 - _number("discount", discount) / 100)

    def calculate_total(self, quantities: list[int], prices: list[float]) -> float:
        q, p = _numbers("quantities", quantities), _numbers("prices", prices)
        _same_length(q, p)
        return sum(a * b for a, b in zip(q, p, strict=True))

    def order_food(self, item: list[str], quantity: list[int], price: list[float]) -> float:
        if not isinstance(item, list | tuple) or len(item) > MAX_ITEMS:
            raise ExecRefused("item must be a list of names")
        quantities, prices = _numbers("quantity", quantity), _numbers("price", price)
        _same_length(list(item), quantities, prices)
        return sum(q * p for q, p in zip(quantities, prices, strict=True))

    # -- health ---------------------------------------------------------------------------------

    def calculate_basal_metabolic_rate(
        self, weight: float, height: float, age: float, gender: str
    ) -> float:
        return _bmr(weight, height, age, gender)

    def calculate_daily_energy_expenditure(
        self, basal_metabolic_rate: float, activity_level: float
    ) -> float:
        return _number("basal_metabolic_rate", basal_metabolic_rate) * _activity(activity_level)

    def calculate_nutritional_needs(
        self,
        weight: float,
        height: float,
        age: float,
        gender: str,
        activity_level: float,
        goal: str,
    ) -> dict[str, float]:
        """Calories for the goal, split 30 % protein, 25 % fat, 45 % carbohydrate (grams)."""
        change = GOAL_CALORIES.get(_text("goal", goal).lower())
        if change is None:
            raise ExecRefused(f"goal must be one of {', '.join(GOAL_CALORIES)}")
        calories = _bmr(weight, height, age, gender) * _activity(activity_level) + change
        return {
            "calories": calories,
            "proteins_g": calories * 0.30 / 4,
            "fats_g": calories * 0.25 / 9,
            "carbohydrates_g": calories * 0.45 / 4,
        }

    # -- hotel ----------------------------------------------------------------------------------

    def book_room(
        self,
        room_type: Any,
        check_in_date: str,
        check_out_date: str,
        customer_id: str,
        discount_code: str | None = None,
        price: float | None = None,
    ) -> dict[str, Any]:
        """A booking record. ``price`` (per night) is not in the doc but the ground truth
        passes it; the room type may also be a dict holding it."""
        if isinstance(room_type, dict):
            price = room_type.get("price", price)
            room_type = room_type.get("type", room_type.get("name", ""))
        stay = _date("check_out_date", check_out_date) - _date("check_in_date", check_in_date)
        nights = stay.days
        if nights <= 0:
            raise ExecRefused("check_out_date must be after check_in_date")
        booking: dict[str, Any] = {
            "customer_id": _text("customer_id", customer_id),
            "room_type": _text("room_type", room_type),
            "check_in_date": check_in_date,
            "check_out_date": check_out_date,
            "nights": nights,
        }
        if price is not None:
            booking["total_price"] = _number("price", price) * nights
        if discount_code is not None:
            booking["discount_code"] = _text("discount_code", discount_code)
        return booking

    def calculate_total_price(self, room_price: float, nights: int, discount: float = 0) -> float:
        n = _integer("nights", nights, 0, 100_000)
        return _number("room_price", room_price) * n - _number("discount", discount)

    def confirm_booking(self, customer_id: str, room_number: str, total_price: float) -> str:
        return (
            f"Booking confirmed for customer {_text('customer_id', customer_id)}: room "
            f"{_text('room_number', room_number)}, total {_number('total_price', total_price):.2f}"
        )

    # -- public APIs ----------------------------------------------------------------------------

    def convert_currency(self, amount: float, from_currency: str, to_currency: str) -> float:
        source, target = _currency(from_currency), _currency(to_currency)
        body = self._api(
            f"https://v6.exchangerate-api.com/v6/YOUR-EXCHANGERATE-API-KEY/latest/{source}"
        )
        rate = _number("rate", self._pick(body, "conversion_rates", target))
        return _number("amount", amount) * rate

    def find_term_on_urban_dictionary(self, term: str) -> str:
        url = "https://mashape-community-urban-dictionary.p.rapidapi.com/define"
        body = self._api(url, {"term": _text("term", term)}, rapid=True)
        return str(self._pick(body, "list", 0, "definition"))

    def _covid(self, country: str) -> Any:
        url = "https://covid-193.p.rapidapi.com/statistics"
        body = self._api(url, {"country": _text("country", country)}, rapid=True)
        return self._pick(body, "response", 0)

    def get_active_covid_case_by_country(self, country: str) -> int:
        return self._pick(self._covid(country), "cases", "active")

    def get_covid_death_by_country(self, country: str) -> int:
        return self._pick(self._covid(country), "deaths", "total")

    def _quote(self, stock_name: str) -> Any:
        url = "https://yahoo-finance15.p.rapidapi.com/api/v1/markets/stock/quotes"
        body = self._api(url, {"ticker": _symbol(stock_name)}, rapid=True)
        return self._pick(body, "body", 0)

    def get_company_name_by_stock_name(self, stock_name: str) -> str:
        return str(self._pick(self._quote(stock_name), "longName"))

    def get_stock_price_by_stock_name(self, stock_name: str) -> float:
        return self._pick(self._quote(stock_name), "regularMarketPrice")

    def get_stock_history(
        self, stock_name: str, interval: str, diffandsplits: str = "false"
    ) -> dict[str, Any]:
        if interval not in ("5m", "15m", "30m", "1h", "1d", "1wk", "1mo", "3mo"):
            raise ExecRefused("interval must be one of 5m|15m|30m|1h|1d|1wk|1mo|3mo")
        if diffandsplits not in ("true", "false"):
            raise ExecRefused("diffandsplits must be 'true' or 'false'")
        url = "https://yahoo-finance15.p.rapidapi.com/api/v1/markets/stock/history"
        params = {
            "symbol": _symbol(stock_name),
            "interval": interval,
            "diffandsplits": diffandsplits,
        }
        return self._pick(self._api(url, params, rapid=True), "body")

    def _ip(self, ip_address: str) -> dict[str, Any]:
        try:
            address = ipaddress.ip_address(_text("ip_address", ip_address).strip())
        except ValueError:
            raise ExecRefused(f"not an IP address: {ip_address!r}") from None
        body = self._api(f"http://ip-api.com/json/{address}")
        if not isinstance(body, dict):
            raise ExecRefused("the API's answer is not an object")
        return body

    def get_coordinate_by_ip_address(self, ip_address: str) -> Any:
        """``[lat, lon]``, or the API's message (``private range``) when it has none."""
        body = self._ip(ip_address)
        if body.get("status") != "success":
            return str(body.get("message", "unknown"))
        return [body.get("lat"), body.get("lon")]

    def get_zipcode_by_ip_address(self, ip_address: str) -> Any:
        body = self._ip(ip_address)
        if body.get("status") != "success":
            return str(body.get("message", "unknown"))
        return body.get("zip")

    def get_coordinates_from_city(self, city_name: str) -> list[Any]:
        params = {"q": _text("city_name", city_name), "api_key": "YOUR-GEOCODE-API-KEY"}
        place = self._pick(self._api("https://geocode.maps.co/search", params), 0)
        return [self._pick(place, "lat"), self._pick(place, "lon")]

    def get_time_zone_by_coord(self, long: str, lat: str) -> str:
        params = {"lat": _coordinate("lat", lat, 90), "lon": _coordinate("long", long, 180)}
        url = "https://timezone-by-location.p.rapidapi.com/timezone"
        return str(self._pick(self._api(url, params, rapid=True), "Zones", 0, "TimezoneId"))

    def get_weather_data(self, coordinates: list[float]) -> float:
        """The current temperature (degrees Celsius) at ``[latitude, longitude]``."""
        point = _numbers("coordinates", coordinates, 2)
        if len(point) != 2:
            raise ExecRefused("coordinates must be [latitude, longitude]")
        params = {"latitude": point[0], "longitude": point[1], "current": "temperature_2m"}
        body = self._api("https://api.open-meteo.com/v1/forecast", params)
        return self._pick(body, "current", "temperature_2m")

    def _amazon(self, asin: str) -> Any:
        code = _text("ASIN", asin, 20)
        if not re.fullmatch(r"[A-Z0-9]{10}", code):
            raise ExecRefused(f"not an Amazon ASIN: {code!r}")
        url = "https://real-time-amazon-data.p.rapidapi.com/product-details"
        body = self._api(url, {"asin": code, "country": "US"}, rapid=True)
        return self._pick(body, "data")

    def get_price_by_amazon_ASIN(self, ASIN: str) -> str:
        return str(self._pick(self._amazon(ASIN), "product_price"))

    def get_product_name_by_amazon_ASIN(self, ASIN: str) -> str:
        return str(self._pick(self._amazon(ASIN), "product_title"))

    def get_rating_by_amazon_ASIN(self, ASIN: str) -> str:
        return str(self._pick(self._amazon(ASIN), "product_star_rating"))

    def retrieve_city_based_on_zipcode(self, zipcode: str) -> str:
        code = _text("zipcode", zipcode, 10).strip()
        if not re.fullmatch(r"\d{5}", code):
            raise ExecRefused(f"not a US zipcode: {code!r}")
        body = self._api(f"https://api.zippopotam.us/us/{code}")
        return str(self._pick(body, "places", 0, "place name")).upper()

    def retrieve_holiday_by_year(self, year: str, country: str) -> list[Any]:
        y, code = _text("year", str(year), 4), _text("country", country, 2).upper()
        if not re.fullmatch(r"\d{4}", y) or not re.fullmatch(r"[A-Z]{2}", code):
            raise ExecRefused("year must be four digits and country a two-letter code")
        return self._api(f"https://date.nager.at/api/v3/PublicHolidays/{y}/{quote(code)}")

    def _movie(self, movie_name: str, field: str) -> str:
        params = {"t": _text("movie_name", movie_name), "apikey": "YOUR-OMDB-API-KEY"}
        body = self._api("http://www.omdbapi.com/", params)
        if isinstance(body, dict) and body.get("Response") == "False":
            return str(body.get("Error", "Movie not found!"))
        return str(self._pick(body, field))

    def get_movie_director(self, movie_name: str) -> str:
        return self._movie(movie_name, "Director")

    def get_director_by_movie_name(self, movie_name: str) -> str:
        return self._movie(movie_name, "Director")

    def get_movie_rating(self, movie_name: str) -> str:
        return self._movie(movie_name, "Rated")

    def get_movie_genre(self, movie_name: str) -> str:
        return self._movie(movie_name, "Genre")


def _step_into(current: Any, step: str | int) -> Any:
    """One step into an API's answer: objects by key, lists by position, never into text."""
    if isinstance(current, dict) and step in current:
        return current[step]
    if isinstance(current, list) and isinstance(step, int) and -len(current) <= step < len(current):
        return current[step]
    raise ExecRefused(f"the API's answer has no {step!r}")


def _direction(dx: float, dy: float) -> tuple[float, float]:
    """A canonical direction for a slope: integers reduced by their gcd, floats by the angle."""
    if all(float(v).is_integer() for v in (dx, dy)):
        ix, iy = int(dx), int(dy)
        g = math.gcd(ix, iy)
        ix, iy = ix // g, iy // g
        if ix < 0 or (ix == 0 and iy < 0):
            ix, iy = -ix, -iy
        return (float(ix), float(iy))
    if dx < 0 or (dx == 0 and dy < 0):
        dx, dy = -dx, -dy
    return (round(math.atan2(dy, dx), 12), 0.0)


def _matrix(name: str, value: Any) -> list[list[float]]:
    if not isinstance(value, list | tuple) or not 0 < len(value) <= MAX_MATRIX:
        raise ExecRefused(f"{name} must be a matrix of at most {MAX_MATRIX} rows")
    rows = [_numbers(f"{name}[{i}]", row, 1) for i, row in enumerate(value)]
    if len({len(r) for r in rows}) != 1 or len(rows[0]) > MAX_MATRIX:
        raise ExecRefused(f"{name} must be rectangular, at most {MAX_MATRIX} columns")
    return rows


def _unit(value: Any) -> str:
    unit = _text("unit", value, 20).strip().lower()
    if unit in ("c", "celsius", "°c"):
        return "c"
    if unit in ("f", "fahrenheit", "°f"):
        return "f"
    raise ExecRefused(f"unknown temperature unit {value!r}: Celsius or Fahrenheit")


def _date(name: str, value: Any) -> datetime:
    try:
        return datetime.strptime(_text(name, value, 20), "%m-%d-%Y")
    except ValueError:
        raise ExecRefused(f"{name} must be a date MM-DD-YYYY, not {value!r}") from None


def _currency(value: Any) -> str:
    code = _text("currency", value, 10).strip().upper()
    if not re.fullmatch(r"[A-Z]{3}", code):
        raise ExecRefused(f"not an ISO currency code: {value!r}")
    return code


def _symbol(value: Any) -> str:
    symbol = _text("stock_name", value, 20).strip().upper()
    if not re.fullmatch(r"[A-Z0-9.\-^=]{1,15}", symbol):
        raise ExecRefused(f"not a stock symbol: {value!r}")
    return symbol


def _coordinate(name: str, value: Any, limit: float) -> float:
    try:
        number = float(value) if isinstance(value, str) else _number(name, value)
    except ValueError:
        raise ExecRefused(f"{name} must be a number, not {value!r}") from None
    if not -limit <= number <= limit:
        raise ExecRefused(f"{name} must be between -{limit:g} and {limit:g}")
    return number


__all__ = ["ApiUnavailable", "ExecRefused", "ExecutableAPI", "parse_lambda"]
