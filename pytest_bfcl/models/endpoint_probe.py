"""The probe of one endpoint before generation: it answers, accepts the key, serves the model,
and does not redirect. A ``/models`` listing is asked first; a server without that route is
asked for one token instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_bfcl.errors import SetupError
from pytest_bfcl.models.endpoint_errors import (
    NETWORK_ERRORS,
    Unreachable,
    error_text,
    read_capped,
    redirect_problem,
    status_failure,
    transport_failure,
)
from pytest_bfcl.models.endpoint_response import served_models
from pytest_bfcl.routing.balancer import Replica
from pytest_bfcl.web.transport import deadline

PROBE_BODY_BYTES = 4 * 2**20  # a /models listing (OpenAI's is about 10 kB)


def probe_endpoint(
    http: Any, endpoint: Replica, model: str, ping: Callable[[], bytes], timeout: float
) -> None:
    """Raises :class:`SetupError` with what failed, where, and the fix; :class:`Unreachable`
    when the endpoint does not answer at all."""
    status, body = probe_request(http, "GET", endpoint.models_url, endpoint, None, timeout)
    if 200 <= status < 300:
        served = served_models(body)
        if served and model not in served:
            shown = ", ".join(served[:10]) + (", ..." if len(served) > 10 else "")
            raise SetupError(
                f"the server at {endpoint.base_url} does not serve the model {model!r} "
                f"(--bfcl-model); it serves: {shown}"
            )
        return
    if status not in (401, 403):  # no /models route here: ask for one token instead
        status, body = probe_request(http, "POST", endpoint.chat_url, endpoint, ping(), timeout)
        if status not in (401, 403, 404):
            return  # it answers; anything else shows up in the entries
    failure = status_failure(status, endpoint.base_url, error_text(body), None)
    raise SetupError(f"the model server does not accept the run: {failure}")


def probe_request(
    http: Any, method: str, url: str, endpoint: Replica, payload: bytes | None, timeout: float
) -> tuple[int, bytes]:
    """The status and (capped) body of one probe request."""
    try:
        with (
            deadline(timeout),
            http.stream(
                method, url, content=payload, headers=endpoint.headers, timeout=timeout
            ) as response,
        ):
            if response.is_redirect:  # never followed: the key goes where it was told
                location = response.headers.get("location")
                raise SetupError(redirect_problem(url, response.status_code, location))
            body, _ = read_capped(response, PROBE_BODY_BYTES)
            return response.status_code, body
    except NETWORK_ERRORS as exc:
        failure = transport_failure(exc, url, timeout)
        raise Unreachable(f"the model server does not answer: {failure}") from None
