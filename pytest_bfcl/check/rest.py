"""The ``rest`` category of the first release: the model's ``requests.get(...)`` is read as
literals (never evaluated), sent through the executable APIs' client, and its response compared
with the stored one: the request succeeds, the same JSON type, element counts and key sets."""

from __future__ import annotations

import ast
import json
from typing import Any
from urllib.parse import urlsplit

from pytest_bfcl.backends.base import BackendServices
from pytest_bfcl.backends.exec_api import ApiClient, ApiRequest, ApiRequestError, ApiUnavailable
from pytest_bfcl.check.executable import Mismatch, decode_calls, decode_failure, exec_verdict
from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.executable import ExecAnswer
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.limits import MAX_TEXT_CHARS
from pytest_bfcl.errors import InfrastructureError
from pytest_bfcl.scoring import ScoringOptions

REST_NAMES = ("requests.get", "requests_get")
REST_ARGUMENTS = frozenset(
    {"url", "params", "headers", "timeout", "stream", "allow_redirects", "auth", "cert"}
    | {"cookies", "proxies", "verify"}
)


class RestCallError(ValueError):
    """The model's REST call is not a readable ``requests.get(...)``."""


def parse_rest_call(call: str) -> ApiRequest:
    """``requests.get(url, params=..., headers=...)`` read as literals (never evaluated)."""
    if len(call) > MAX_TEXT_CHARS:
        raise RestCallError("the call is too long")
    try:
        node = ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise RestCallError(f"cannot parse the call: {type(exc).__name__}") from None
    if not isinstance(node, ast.Call) or ast.unparse(node.func) not in REST_NAMES:
        raise RestCallError("expected a call of requests.get")
    args = {k.arg: _literal(k.value) for k in node.keywords if k.arg is not None}
    if len(node.args) > 1 or len(node.keywords) != len(args):
        raise RestCallError("only the url may be positional; no argument unpacking")
    if node.args:
        args.setdefault("url", _literal(node.args[0]))
    unknown = set(args) - REST_ARGUMENTS
    if unknown:
        raise RestCallError(f"unknown arguments of requests.get: {sorted(unknown)}")
    url, params, headers = args.get("url"), args.get("params") or {}, args.get("headers") or {}
    if not isinstance(url, str) or not isinstance(params, dict) or not isinstance(headers, dict):
        raise RestCallError("url must be a string, params and headers dicts")
    if not all(_plain_param(v) for v in params.values()):
        raise RestCallError("params values must be strings, numbers or lists of them")
    params = {str(k): v for k, v in params.items()}
    return ApiRequest(url, params, {str(k): str(v) for k, v in headers.items()})


def _plain_param(value: Any) -> bool:
    scalar = (str, int, float, bool, type(None))
    if isinstance(value, list | tuple):
        return len(value) <= 1_000 and all(isinstance(v, scalar) for v in value)
    return isinstance(value, scalar)


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise RestCallError(f"not a literal argument: {ast.unparse(node)[:80]}") from None


def rest_mismatch(status: int, body: Any, expected: Any) -> Mismatch | None:
    """The REST checks: the request succeeded, the same JSON type, the same element count
    (lists) and key sets (dicts, and the dicts of a list element by element)."""
    if status >= 400:
        return Mismatch(
            "executable_checker:rest_request_failed", f"the request answered HTTP {status}"
        )
    if isinstance(expected, list | dict) and type(body) is not type(expected):
        return Mismatch(
            "executable_checker:rest_wrong_type",
            f"expected a JSON {type(expected).__name__}, got {type(body).__name__}",
        )
    if isinstance(expected, list):
        if len(body) != len(expected):
            return Mismatch(
                "executable_checker:rest_wrong_length",
                f"expected {len(expected)} elements, got {len(body)}",
            )
        for i, (got, want) in enumerate(zip(body, expected, strict=True)):
            if isinstance(want, dict) and (not isinstance(got, dict) or set(got) != set(want)):
                return Mismatch("executable_checker:rest_wrong_keys", f"element {i}: keys differ")
    if isinstance(expected, dict) and set(body) != set(expected):
        missing = sorted(set(expected) - set(body))
        extra = sorted(set(body) - set(expected))
        return Mismatch(
            "executable_checker:rest_wrong_keys",
            f"response keys differ: missing {missing[:10]}, unexpected {extra[:10]}",
        )
    return None


def evaluate_rest(
    entry: Entry,
    answer: ExecAnswer,
    result: Any,
    options: ScoringOptions,
    services: BackendServices | None,
) -> Verdict:
    expected = json.loads(str(answer.ground_truth))
    try:
        calls = decode_calls(result, options)
    except DecodeError as exc:
        return decode_failure(entry, result, expected, exc)

    def failed(error_type: str, message: str) -> Verdict:
        return exec_verdict(entry, result, expected, valid=False, decoded=calls,
                            error_type=error_type, errors=[message])  # fmt: skip

    if len(calls) != 1:
        return failed("executable_checker:wrong_count", f"{len(calls)} calls made, 1 expected")
    try:
        request = parse_rest_call(calls[0])
    except RestCallError as exc:
        return failed("executable_checker:rest_bad_call", str(exc))
    problem = _rest_problem(request, answer, expected, services)
    if problem is None:
        return exec_verdict(entry, result, expected, valid=True, decoded=calls)
    return failed(problem.error_type, problem.message)


def _rest_problem(
    request: ApiRequest, answer: ExecAnswer, expected: Any, services: BackendServices | None
) -> Mismatch | None:
    client = ApiClient((services or BackendServices()).web)
    try:
        response = client.get(request)
    except ApiRequestError as exc:
        return Mismatch("executable_checker:rest_bad_call", str(exc))
    except ApiUnavailable as exc:
        if _same_host(request, answer):  # the benchmark's API is down: the run's problem
            raise InfrastructureError(f"the API at {request.url} could not answer: {exc}") from None
        return Mismatch("executable_checker:rest_request_failed", f"the request failed: {exc}")
    return rest_mismatch(response.status, response.body, expected)


def _same_host(request: ApiRequest, answer: ExecAnswer) -> bool:
    if not answer.call:
        return False
    try:
        truth = parse_rest_call(answer.call)
    except RestCallError:
        return False
    return urlsplit(truth.url).hostname == urlsplit(request.url).hostname
