"""A stateless calculator (``MathAPI``)."""

from __future__ import annotations

import decimal
import math
from typing import Any

from pytest_bfcl.backends.base import Backend

# Bounds on work a call may ask for; the benchmark's inputs are far below them. Without them a
# model could stall a worker with ``logarithm(precision=10**9)`` or ``power(10, 10**12)``.
# Deliberate deviation: past a bound the call answers with an error value where the
# reference would compute for hours.
MAX_PRECISION = 10_000
MAX_POWER_BITS = 1_000_000
# ``round(5, -10**9)`` computes ``10**(10**9)`` for an integer; digits beyond this are refused.
MAX_ROUND_DIGITS = 10_000

_TO_METERS = {"km": 1000, "m": 1, "cm": 0.01, "mm": 0.001, "um": 1e-06, "nm": 1e-09}
_IMPERIAL = {
    "cm_to_in": 0.393701,
    "in_to_cm": 2.54,
    "m_to_ft": 3.28084,
    "ft_to_m": 0.3048,
    "m_to_yd": 1.09361,
    "yd_to_m": 0.9144,
    "km_to_miles": 0.621371,
    "miles_to_km": 1.60934,
    "kg_to_lb": 2.20462,
    "lb_to_kg": 0.453592,
    "celsius_to_fahrenheit": 1.8,
    "fahrenheit_to_celsius": 5 / 9,
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float)


def _as_count(value: Any) -> int | None:
    """The integer a library makes of ``value`` (mpmath calls ``int()`` on a precision, so
    ``1e9``, ``True`` and ``"1000000000"`` all count), or ``None`` when it has none (the
    library then fails on it by itself, which the method reports)."""
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float | str):
        try:
            return int(value)
        except (ValueError, OverflowError):  # nan, inf, text, more than 4,300 digits
            return None
    return None


def _precision_ok(precision: Any) -> bool:
    count = _as_count(precision)
    return count is None or count <= MAX_PRECISION


class MathAPI(Backend):
    STATELESS = True

    def logarithm(self, value: float, base: float, precision: int) -> dict[str, Any]:
        if not _precision_ok(precision):
            return {"error": f"precision must be at most {MAX_PRECISION}"}
        # Imported here: mpmath (50 modules) only matters to the entries that take a logarithm.
        import mpmath

        # A private context per call: the result is the same as with mpmath's global one at
        # this precision, and concurrent entries cannot change each other's precision.
        context = mpmath.MPContext()
        try:
            context.dps = precision
            return {"result": context.log(value) / context.log(base)}
        except Exception as exc:  # the API reports any failure as an error value
            return {"error": str(exc)}

    def mean(self, numbers: list[float]) -> dict[str, Any]:
        if not numbers:
            return {"error": "Cannot calculate mean of an empty list"}
        try:
            return {"result": sum(numbers) / len(numbers)}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}

    def standard_deviation(self, numbers: list[float]) -> dict[str, Any]:
        if not numbers:
            return {"error": "Cannot calculate standard deviation of an empty list"}
        try:
            average = sum(numbers) / len(numbers)
            variance = sum((x - average) ** 2 for x in numbers) / len(numbers)
            return {"result": math.sqrt(variance)}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}

    def si_unit_conversion(self, value: float, unit_in: str, unit_out: str) -> dict[str, Any]:
        if not _number(value):
            return {"error": "Value must be a number"}
        if unit_in not in _TO_METERS or unit_out not in _TO_METERS:
            return {"error": f"Conversion from '{unit_in}' to '{unit_out}' is not supported"}
        try:
            return {"result": value * _TO_METERS[unit_in] * (1 / _TO_METERS[unit_out])}
        except OverflowError:
            return {"error": "Conversion resulted in a value too large to represent"}

    def imperial_si_conversion(self, value: float, unit_in: str, unit_out: str) -> dict[str, Any]:
        if not _number(value):
            return {"error": "Value must be a number"}
        if unit_in == unit_out:
            return {"result": value}
        key = f"{unit_in}_to_{unit_out}"
        if key not in _IMPERIAL:
            return {"error": f"Conversion from '{unit_in}' to '{unit_out}' is not supported"}
        try:
            if key == "celsius_to_fahrenheit":
                return {"result": value * _IMPERIAL[key] + 32}
            if key == "fahrenheit_to_celsius":
                return {"result": (value - 32) * _IMPERIAL[key]}
            return {"result": value * _IMPERIAL[key]}
        except OverflowError:
            return {"error": "Conversion resulted in a value too large to represent"}

    def add(self, a: float, b: float) -> dict[str, Any]:
        try:
            return {"result": a + b}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def subtract(self, a: float, b: float) -> dict[str, Any]:
        try:
            return {"result": a - b}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def multiply(self, a: float, b: float) -> dict[str, Any]:
        if not _number(a) or not _number(b):
            return {"error": "Both inputs must be numbers"}
        return {"result": a * b}

    def divide(self, a: float, b: float) -> dict[str, Any]:
        try:
            if b == 0:
                return {"error": "Cannot divide by zero"}
            return {"result": a / b}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def power(self, base: float, exponent: float) -> dict[str, Any]:
        if (
            isinstance(base, int)
            and isinstance(exponent, int)
            and abs(base) > 1
            and exponent * base.bit_length() > MAX_POWER_BITS
        ):
            return {"error": "Result too large to compute"}
        try:
            return {"result": base**exponent}
        except TypeError:
            return {"error": "Both inputs must be numbers"}
        except (OverflowError, ZeroDivisionError) as exc:
            return {"error": str(exc)}

    def square_root(self, number: float, precision: int) -> dict[str, Any]:
        try:
            if number < 0:
                return {"error": "Cannot calculate square root of a negative number"}
            if not _precision_ok(precision):
                return {"error": f"precision must be at most {MAX_PRECISION}"}
            context = decimal.Context()  # private, for the same reason as above
            context.prec = precision  # assigned, as the reference does: a non-integer fails here
            return {"result": decimal.Decimal(number).sqrt(context=context)}
        except (TypeError, ValueError, decimal.InvalidOperation):
            return {
                "error": "Input must be a number or computation resulted in an invalid operation"
            }

    def absolute_value(self, number: float) -> dict[str, Any]:
        try:
            return {"result": abs(number)}
        except TypeError:
            return {"error": "Input must be a number"}

    def round_number(self, number: float, decimal_places: int = 0) -> dict[str, Any]:
        # Only an integer is accepted by ``round``; anything else fails below by itself.
        if isinstance(decimal_places, int) and abs(decimal_places) > MAX_ROUND_DIGITS:
            return {
                "error": f"decimal_places must be between -{MAX_ROUND_DIGITS} and "
                f"{MAX_ROUND_DIGITS}"
            }
        try:
            return {"result": round(number, decimal_places)}
        except TypeError:
            return {"error": "First input must be a number, second input must be an integer"}

    def percentage(self, part: float, whole: float) -> dict[str, Any]:
        try:
            if whole == 0:
                return {"error": "Whole value cannot be zero"}
            return {"result": part / whole * 100}
        except TypeError:
            return {"error": "Both inputs must be numbers"}

    def min_value(self, numbers: list[float]) -> dict[str, Any]:
        return self._reduce(numbers, min, "Cannot find minimum of an empty list")

    def max_value(self, numbers: list[float]) -> dict[str, Any]:
        return self._reduce(numbers, max, "Cannot find maximum of an empty list")

    def sum_values(self, numbers: list[float]) -> dict[str, Any]:
        return self._reduce(numbers, sum, "Cannot calculate sum of an empty list")

    @staticmethod
    def _reduce(numbers: list[float], fn: Any, empty: str) -> dict[str, Any]:
        if not numbers:
            return {"error": empty}
        try:
            return {"result": fn(numbers)}
        except TypeError:
            return {"error": "All elements in the list must be numbers"}
