"""How an endpoint's failures count: each failed attempt classified (no answer, refused for
good, busy, a refused request, a cancelled attempt, a context-length refusal) from the
transport exception or the HTTP status, with one line that says what happened and the fix."""

from __future__ import annotations

import json
import math
import re
import socket
from typing import TYPE_CHECKING, Any

from pytest_bfcl.errors import InfrastructureError, RunStopped, SetupError
from pytest_bfcl.models.gateway_answers import is_prompt_filter, is_quota_exhausted
from pytest_bfcl.redact import url_credentials
from pytest_bfcl.web.transport import httpx

if TYPE_CHECKING:
    from pytest_bfcl.routing.balancer import Replica

ERROR_BODY_BYTES = 64 * 1024  # enough of an error answer to quote its message
# What goes wrong on the way: the network, or a body that cannot be decoded (a gzip header on
# a body that is not gzip): a failed attempt either way.
NETWORK_ERRORS = (httpx.TransportError, httpx.DecodingError)
# How servers word a request longer than the model's context window (OpenAI, vLLM, SGLang,
# llama.cpp, TGI, gateways), answered with one of these statuses.
_CONTEXT_STATUSES = (400, 413, 422)
_CONTEXT_WORDS = re.compile(
    r"context[ _-]?(length|window|size)|maximum model length|max_model_len"
    r"|prompt is too long|input is too long|too many (input |prompt )?tokens"
    r"|tokens \+ `?max_new_tokens`? must be <=",
    re.IGNORECASE,
)


class InferenceError(InfrastructureError):
    """The server did not answer usably after the allowed retries (infrastructure)."""


class ServerDown(InferenceError, RunStopped):
    """The server is unreachable; remaining entries are not attempted."""


class Unreachable(SetupError):
    """The probe before the run got no answer from a replica."""


class Failure(Exception):
    """One failed attempt, with how it counts.

    - ``silent``: no usable answer (timeout, dropped connection, 5xx, a body that is not a
      completion): retried; evidence that the server is down;
    - ``fatal``: refused connection, unknown host, 401/403/404: no retry will change it soon;
      a replica that answers so twice in a row is out of rotation (for good when ``lasting``:
      401/403/404 and an unknown host; a refused connection is probed again);
    - ``busy``: 429: retried after the server's delay; the server is alive;
    - ``refused``: any other 4xx: the request itself is refused; not retried;
    - ``cancelled``: the balancer took a stalled replica out of rotation mid-request; retried
      on another replica at once;
    - ``context``: a 4xx saying the request is longer than the model's context window: the
      model's failure (the leaderboard scores it so), not retried, not cached;
    - ``filtered``: a 400 from the provider's content filter: the same.
    """

    def __init__(
        self, kind: str, message: str, retry_after: float | None = None, lasting: bool = False
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.lasting = lasting
        self.endpoint: Replica | None = None


def one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def error_text(body: bytes) -> str:
    """The short message of an error answer: OpenAI's ``error.message``, a ``detail`` or
    ``message`` field, or the start of the body."""
    try:
        payload = json.loads(body)
    except ValueError:
        return one_line(body.decode("utf-8", "replace"))
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        for candidate in (error, payload.get("detail"), payload.get("message")):
            if isinstance(candidate, str) and candidate:
                return one_line(candidate)
    return one_line(body.decode("utf-8", "replace"))


def retry_after_header(response: Any) -> float | None:
    """A Retry-After header in seconds, when it is a usable number."""
    value = response.headers.get("retry-after", "")
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def read_capped(response: Any, limit: int) -> tuple[bytes, bool]:
    """The (decoded) body up to ``limit`` bytes, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            chunks.append(chunk[: len(chunk) - (size - limit)])
            return b"".join(chunks), True
        chunks.append(chunk)
    return b"".join(chunks), False


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def transport_failure(exc: Exception, url: str, timeout: float) -> Failure:
    """What a transport exception means for the run, in one line."""
    if isinstance(exc, httpx.DecodingError):
        return Failure(
            "silent",
            f"the answer from {url} could not be decoded (its Content-Encoding does not match "
            f"its body): {one_line(str(exc)) or type(exc).__name__}",
        )
    if isinstance(exc, httpx.TimeoutException):
        return Failure("silent", f"no complete answer within {timeout:g} s from {url}")
    if isinstance(exc, httpx.ConnectError):
        if _cause(exc, ConnectionRefusedError):
            return Failure(
                "fatal",
                f"connection refused at {url}: nothing listens there "
                "(start the server, or fix --bfcl-base-url)",
            )
        lookup = _cause(exc, socket.gaierror)
        if lookup is not None and getattr(lookup, "errno", None) != socket.EAI_AGAIN:
            return Failure(
                "fatal",
                f"cannot resolve the host of {url} (fix --bfcl-base-url): {exc}",
                lasting=True,
            )
    return Failure("silent", f"the connection to {url} failed: {one_line(str(exc)) or exc!r}")


def redirect_problem(url: str, status: int, location: str | None) -> str:
    """One line for a server that redirects: where to, and the fix. Redirects are never
    followed, so that the API key goes only where ``--bfcl-base-url`` says."""
    target = (
        f"to {one_line(url_credentials(location) or location)}"
        if location
        else "without a Location"
    )
    return (
        f"{url} answers HTTP {status}, a redirect {target}; redirects are not followed, so "
        "that the API key goes only where it was told: set --bfcl-base-url to the address it "
        "redirects to"
    )


def status_failure(
    status: int,
    url: str,
    text: str,
    retry_after: float | None,
    body: bytes = b"",
    location: str | None = None,
) -> Failure:
    where = f"HTTP {status} from {url}" + (f": {text}" if text else "")
    if 300 <= status < 400:
        return Failure("fatal", redirect_problem(url, status, location), lasting=True)
    if status in _CONTEXT_STATUSES and _CONTEXT_WORDS.search(
        body.decode("utf-8", "replace") or text
    ):
        return Failure("context", text or where)
    if is_prompt_filter(status, body):  # the model as served refuses: its failure
        return Failure("filtered", text or where)
    if is_quota_exhausted(status, body):
        return Failure(
            "fatal",
            f"{where} (the account's quota is used up and no wait lifts it: add credit, or "
            "use another key)",
            lasting=True,
        )
    if status in (401, 403):
        return Failure(
            "fatal",
            f"{where} (the server refuses the API key: set it in $OPENAI_API_KEY, or name "
            "the variable that holds it with --bfcl-api-key-env)",
            lasting=True,
        )
    if status == 404:
        return Failure(
            "fatal",
            f"{where} (check --bfcl-base-url, which usually ends in /v1, and that the "
            "server serves the model named by --bfcl-model)",
            lasting=True,
        )
    if status == 429:
        return Failure("busy", where, retry_after)
    if status in (408, 409) or status >= 500:
        return Failure("silent", where, retry_after)
    return Failure("refused", where)
