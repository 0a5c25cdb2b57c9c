"""Executable evaluation, the first release's way: run the model's calls, run the ground
truth's calls the same way, and compare the results.

Per ground-truth call, its ``execution_result_type`` says how a result matches:

- ``exact_match``: equal;
- ``real_time_match``: numbers within 20 % of the expected one (live figures move); other
  values equal;
- ``structural_match``: the same type (numbers are one type: JSON does not tell ``5`` from
  ``5.0``), lists of the same length, dicts with the same key set.

Multiple, parallel and parallel-multiple entries are all-or-nothing and order-free: the model
must make as many calls as the ground truth, and its results must pair off one to one with the
expected results, each under its own rule. ``rest`` entries are checked in :mod:`.rest`;
``sql`` is checked by its syntax tree (the executable kind, ``kinds/executable.py``, picks).

A call is data: decoded, parsed with :mod:`ast`, and only public methods of
:class:`~pytest_bfcl.backends.executable.ExecutableAPI` run, with literal arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.exec_api import ApiUnavailable
from pytest_bfcl.backends.executable import ExecutableAPI
from pytest_bfcl.backends.execute import DENIED_NAMES, Environment
from pytest_bfcl.check.multi_turn import decode_step
from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.categories import EXEC
from pytest_bfcl.dataset.executable import ExecAnswer
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.limits import clip, short_repr
from pytest_bfcl.errors import InfrastructureError, ToolUnavailable
from pytest_bfcl.scoring import ScoringOptions

REAL_TIME_TOLERANCE = 0.20


@dataclass(frozen=True)
class Outcome:
    """What one call gave: a value, or an error message."""

    call: str
    value: Any = None
    error: str | None = None
    unavailable: bool = False  # the API could not answer (the run's problem, not the call's)


@dataclass(frozen=True)
class Mismatch:
    error_type: str
    message: str


# -- execution ----------------------------------------------------------------------------------


def exec_environment(services: BackendServices | None = None) -> Environment:
    """An executor over one fresh :class:`ExecutableAPI` (its methods are the only names a
    call can reach)."""
    instance = ExecutableAPI()
    instance._services = services or BackendServices()
    env = Environment({"ExecutableAPI": instance})
    env._owners.update({name: instance for name in ExecutableAPI.public_methods()})
    return env


def run_call(env: Environment, call: str) -> Outcome:
    """Execute one call string. A cassette miss (replay) propagates as an error of the run."""
    name = call.split("(", 1)[0].rsplit(".", 1)[-1].strip()
    if name in DENIED_NAMES:
        return Outcome(call, error=f"Function call {name} is not allowed.")
    try:
        return Outcome(call, value=env._run(call))
    except ToolUnavailable:
        raise
    except ApiUnavailable as exc:
        return Outcome(call, error=str(exc), unavailable=True)
    except RecursionError:
        return Outcome(call, error="the call is nested too deeply")
    except Exception as exc:  # a refused argument, a bad call: the call's error result
        return Outcome(call, error=f"{type(exc).__name__}: {exc}")


def expected_outcomes(answer: ExecAnswer, services: BackendServices | None) -> list[Outcome]:
    """The ground truth's results. An API that cannot answer is an error of the run."""
    env = exec_environment(services)
    outcomes = [run_call(env, call) for call in answer.calls]
    for outcome in outcomes:
        if outcome.unavailable:
            raise InfrastructureError(
                f"the ground truth call {outcome.call} could not run: {outcome.error}"
            )
    return outcomes


# -- matching -----------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def match_result(actual: Outcome, expected: Any, rule: str) -> Mismatch | None:
    """``None`` when ``actual`` matches ``expected`` under ``rule``."""
    try:
        return _match_result(actual, expected, rule)
    except Exception as exc:  # values that cannot be compared (a huge int against a float)
        return Mismatch(
            "executable_checker:wrong_result",
            f"the result cannot be compared with the expected one: {type(exc).__name__}",
        )


def _match_result(actual: Outcome, expected: Any, rule: str) -> Mismatch | None:
    if actual.error is not None:
        return Mismatch(
            "executable_checker:execution_error", f"{actual.call} failed: {actual.error}"
        )
    value = actual.value
    if rule == "structural_match":
        return structural_mismatch(value, expected)
    if rule == "real_time_match" and _is_number(expected):
        if not _is_number(value):
            return Mismatch(
                "executable_checker:real_time_mismatch",
                f"expected a number near {expected!r}, got {short_repr(value)}",
            )
        if abs(value - expected) <= REAL_TIME_TOLERANCE * abs(expected):
            return None
        return Mismatch(
            "executable_checker:real_time_mismatch",
            f"{value!r} is not within 20% of the expected {expected!r}",
        )
    if _equal(value, expected):
        return None
    return Mismatch(
        "executable_checker:wrong_result",
        f"wrong result: got {short_repr(value)}, expected {short_repr(expected)}",
    )


def _equal(a: Any, b: Any) -> bool:
    """Python equality, except that ``True`` is not ``1``."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:  # an odd value that cannot compare
        return False


def _kind(value: Any) -> str:
    if _is_number(value):
        return "number"
    if isinstance(value, tuple):
        return "list"
    return type(value).__name__


def structural_mismatch(value: Any, expected: Any) -> Mismatch | None:
    if _kind(value) != _kind(expected):
        return Mismatch(
            "executable_checker:wrong_type",
            f"expected a {_kind(expected)}, got a {_kind(value)}: {short_repr(value)}",
        )
    if isinstance(expected, list | tuple) and len(value) != len(expected):
        return Mismatch(
            "executable_checker:wrong_length",
            f"expected a list of {len(expected)} elements, got {len(value)}",
        )
    if isinstance(expected, dict) and set(value) != set(expected):
        missing = sorted(map(str, set(expected) - set(value)))
        extra = sorted(map(str, set(value) - set(expected)))
        return Mismatch(
            "executable_checker:wrong_keys",
            f"dict keys differ: missing {missing[:10]}, unexpected {extra[:10]}",
        )
    return None


def match_all(actual: list[Outcome], expected: list[Outcome], rules: list[str]) -> Mismatch | None:
    """All-or-nothing, order-free: every expected result pairs with a distinct model result
    under its rule (bipartite matching, so a greedy first choice cannot block a later one)."""
    if len(actual) != len(expected):
        return Mismatch(
            "executable_checker:wrong_count",
            f"{len(actual)} calls made, {len(expected)} expected",
        )
    rules = [*rules, *["exact_match"] * (len(expected) - len(rules))]
    fits = [
        [match_result(a, e.value, rule) is None for a in actual]
        for e, rule in zip(expected, rules, strict=False)
    ]
    partner: dict[int, int] = {}  # model call -> expected call
    for j in range(len(expected)):
        if not _augment(j, fits, partner, set()):
            problem = (
                match_result(actual[0], expected[j].value, rules[j]) if len(actual) == 1 else None
            )
            if problem is not None:
                return problem
            return Mismatch(
                "executable_checker:cannot_find_match",
                f"no model call gives a result matching {expected[j].call} "
                f"({rules[j]}: {short_repr(expected[j].value)})",
            )
    return None


def _augment(j: int, fits: list[list[bool]], partner: dict[int, int], seen: set[int]) -> bool:
    for i, fit in enumerate(fits[j]):
        if fit and i not in seen:
            seen.add(i)
            if i not in partner or _augment(partner[i], fits, partner, seen):
                partner[i] = j
                return True
    return False


# -- entries ------------------------------------------------------------------------------------


def decode_calls(result: Any, options: ScoringOptions) -> list[str]:
    """The model's calls as strings for the executor; any decoder failure is a DecodeError."""
    try:
        return decode_step(result, options.mode, options.handler)
    except DecodeError:
        raise
    except Exception as exc:  # whatever the output makes a decoder raise is the model's
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def decode_failure(entry: Entry, result: Any, expected: Any, exc: DecodeError) -> Verdict:
    """The verdict of an answer whose calls cannot be decoded (shared with :mod:`.rest`)."""
    return exec_verdict(
        entry,
        result,
        expected,
        valid=False,
        error_type="executable_decoder:decoder_failed",
        errors=[f"Failed to decode: {exc}"],
    )


def exec_verdict(entry: Entry, result: Any, expected: Any, **fields: Any) -> Verdict:
    """A verdict of an executable entry (shared with :mod:`.rest`)."""
    return Verdict(
        id=entry.id,
        category=entry.category,
        model_output=result,
        expected=expected,
        **fields,
    )


def evaluate_exec(
    entry: Entry,
    answer: ExecAnswer,
    result: Any,
    options: ScoringOptions,
    services: BackendServices | None,
) -> Verdict:
    try:
        calls = decode_calls(result, options)
    except DecodeError as exc:
        return decode_failure(entry, result, answer.calls, exc)
    expected = expected_outcomes(answer, services)
    bad_truth = [o for o in expected if o.error is not None]
    if bad_truth:
        return exec_verdict(
            entry,
            result,
            answer.calls,
            valid=False,
            decoded=calls,
            error_type="executable_checker:ground_truth_error",
            errors=[f"the ground truth call {o.call} fails: {o.error}" for o in bad_truth],
        )
    actual: list[Outcome] = []
    if len(calls) != len(expected):  # not executed: the count alone fails it
        problem = match_all([Outcome(c) for c in calls], expected, [])
    else:
        env = exec_environment(services)
        actual = [run_call(env, call) for call in calls]
        _raise_if_unavailable(actual)
        problem = match_all(actual, expected, list(answer.execution_result_type))
    shown = [{"call": o.call, "result": short_repr(o.value)} for o in expected]
    if problem is None:
        return exec_verdict(entry, result, shown, valid=True, decoded=calls)
    return exec_verdict(
        entry,
        result,
        shown,
        valid=False,
        decoded=calls,
        error_type=problem.error_type,
        errors=[problem.message],
        report=_report(result, actual or [Outcome(c) for c in calls], expected, answer),
    )


def _report(
    result: Any, actual: list[Outcome], expected: list[Outcome], answer: ExecAnswer
) -> list[str]:
    """The failure's detail lines: each call with what it gave, the model's and the truth's."""
    lines = [f"  output:   {short_repr(result, 600)}", "  model's calls:"]
    for o in actual[:20]:
        got = f"error: {o.error}" if o.error else short_repr(o.value, 200)
        lines.append(f"    {clip(o.call, 200)} -> {got}")
    lines.append("  ground truth:")
    rules = [*answer.execution_result_type, *["exact_match"] * len(expected)]
    for o, rule in zip(expected, rules, strict=False):
        lines.append(f"    {o.call} -> {short_repr(o.value, 200)} ({rule})")
    return lines


def _raise_if_unavailable(outcomes: list[Outcome]) -> None:
    for outcome in outcomes:
        if outcome.unavailable:
            raise InfrastructureError(
                f"the API of {outcome.call} could not answer: {outcome.error}"
            )


# -- reports ------------------------------------------------------------------------------------


def _field(score: Any, name: str) -> Any:
    return score.get(name) if isinstance(score, dict) else getattr(score, name, None)


def exec_summary(categories: Mapping[str, Any], pool_rest: bool = False) -> float | None:
    """The first release's "Exec Summary": the unweighted mean of the four exec categories'
    accuracies (``exec_simple``, ``exec_multiple``, ``exec_parallel``,
    ``exec_parallel_multiple``). ``categories`` maps names to objects (or dicts) with an
    ``accuracy`` (and ``correct``/``total`` for ``pool_rest``); ``None`` unless all four are
    there with an accuracy.

    ``pool_rest``: the first leaderboard's "Simple Function" execution column held Python and
    REST together (100 + 70 entries); with it, the simple part is their pooled accuracy
    (``rest`` must have been scored too)."""
    values = []
    for name in EXEC:
        accuracy = _field(categories.get(name), "accuracy")
        if accuracy is None:
            return None
        values.append(float(accuracy))
    if pool_rest:
        parts = [categories.get("exec_simple"), categories.get("rest")]
        if _field(parts[1], "accuracy") is None:
            return None
        correct = sum(_field(p, "correct") or 0 for p in parts)
        total = sum(_field(p, "total") or 0 for p in parts)
        if not total:
            return None
        values[0] = correct / total
    return sum(values) / len(values)
