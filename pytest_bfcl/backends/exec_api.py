"""Public web APIs for the executable categories, through the run's web access.

The executable functions (currency rates, COVID figures, stock quotes, ...) and the REST
category send plain GET requests. Each goes, by the run's ``--bfcl-web`` mode:

- ``live``: through a bounded client (http/https, public addresses only unless
  ``--bfcl-web-allow-private``, a deadline for the whole request, a size cap, no redirects);
- ``record``: live, and the answer saved in the web cassette (kind ``api``);
- ``replay``: from the cassette only; a request it does not hold stops the entry with an
  error (:class:`~pytest_bfcl.web.cassette.CassetteMiss`), as the web-search tools do;
- ``off`` (no web access): an :class:`ApiUnavailable` error.

API keys come from the environment and never reach a cassette: requests are written with the
dataset's placeholders (``YOUR-RAPID-API-KEY``), the cassette key is made from that form (with
any other key-like header or parameter masked), and placeholders are replaced by the
variables' values only on the wire. ``BFCL_EXEC_API_BASE`` (tests: a local simulated API
server) sends every live request to that base URL instead, with the original host in
``X-Bfcl-Original-Host``; the cassette still records the original URL.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from pytest_bfcl.redact import MASK, register_secret_env
from pytest_bfcl.web.fetch import (
    MAX_REDIRECTS,
    FetchError,
    check_address,
    public_addresses,
    read_bounded,
)
from pytest_bfcl.web.transport import bounded_client, deadline, httpx

# Dataset placeholder -> environment variable holding the key.
KEY_PLACEHOLDERS: dict[str, str] = {
    "YOUR-RAPID-API-KEY": "RAPID_API_KEY",
    "YOUR-EXCHANGERATE-API-KEY": "EXCHANGERATE_API_KEY",
    "YOUR-OMDB-API-KEY": "OMDB_API_KEY",
    "YOUR-GEOCODE-API-KEY": "GEOCODE_API_KEY",
}
BASE_OVERRIDE_ENV = "BFCL_EXEC_API_BASE"
API_TIMEOUT = 20.0  # seconds for a whole request
MAX_RESPONSE_BYTES = 2_000_000
CASSETTE_KIND = "api"
# Header and parameter names whose values are credentials (lower case).
_SECRET_NAMES = frozenset({"x-rapidapi-key", "apikey", "api_key", "key", "token", "access_key"})


class ApiUnavailable(Exception):
    """The API could not answer in this run (no web access, no key, the network); an error
    result for the caller, and for a ground-truth call an error of the run."""


class ApiRequestError(ValueError):
    """The request itself cannot be sent (a value no URL or header can hold): the fault of
    whoever wrote it."""


@dataclass(frozen=True)
class ApiRequest:
    """A GET request as the dataset writes it (placeholders in place of keys)."""

    url: str
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def cassette_key(self) -> dict[str, Any]:
        """The recorded form: any credential that is not a placeholder is masked."""
        return {
            "method": "GET",
            "url": _mask_url(self.url),
            "params": {k: _masked(k, v) for k, v in self.params.items()},
            "headers": {k: _masked(k, v) for k, v in self.headers.items()},
        }


@dataclass(frozen=True)
class ApiResponse:
    status: int
    body: Any  # parsed JSON, or the text when it is not JSON

    def to_record(self) -> dict[str, Any]:
        return {"status": self.status, "body": self.body}


def _masked(name: str, value: Any) -> Any:
    if name.lower() in _SECRET_NAMES and isinstance(value, str) and value not in KEY_PLACEHOLDERS:
        return MASK
    return value


def _mask_url(url: str) -> str:
    """Keys written into a path (``/v6/<key>/latest``) are masked unless placeholders."""
    parts = urlsplit(url)
    if "exchangerate-api.com" not in (parts.hostname or ""):
        return url
    segments = parts.path.split("/")
    if len(segments) > 2 and segments[1] == "v6" and segments[2] not in KEY_PLACEHOLDERS:
        segments[2] = MASK
    return urlunsplit(parts._replace(path="/".join(segments)))


def _fill(value: Any, env: Mapping[str, str]) -> Any:
    """Placeholders replaced by the keys from the environment (only on the wire)."""
    if isinstance(value, str):
        for placeholder, variable in KEY_PLACEHOLDERS.items():
            if placeholder in value:
                register_secret_env(variable)  # masked in anything the run writes
                key = env.get(variable)
                if not key:
                    raise ApiUnavailable(f"the API key is not set: export {variable}")
                value = value.replace(placeholder, key)
        return value
    if isinstance(value, list):
        return [_fill(v, env) for v in value]
    return value


class ApiClient:
    """Sends :class:`ApiRequest` s the way the run's web access says."""

    def __init__(
        self, web: Any, env: Mapping[str, str] | None = None, base_url: str | None = None
    ) -> None:
        self.web = web  # a pytest_bfcl.web.access.WebAccess, or None when the web is off
        self.env = os.environ if env is None else env
        self.base_url = base_url if base_url is not None else self.env.get(BASE_OVERRIDE_ENV)

    @property
    def mode(self) -> str:
        return "off" if self.web is None else str(self.web.mode)

    def get(self, request: ApiRequest) -> ApiResponse:
        """The response; raises :class:`ApiUnavailable` (or a cassette miss when replaying)."""
        if self.mode == "off":
            raise ApiUnavailable("the web is off in this run (--bfcl-web=off)")
        key = request.cassette_key()
        if self.mode == "replay":
            record = self.web.cassette.load(CASSETTE_KIND, key)
            if "request_error" in record:
                raise ApiRequestError(str(record["request_error"]))
            if "error" in record:
                raise ApiUnavailable(str(record["error"]))
            return ApiResponse(int(record["status"]), record["body"])
        try:
            response = self._live(request)
        except ApiRequestError as exc:
            if self.mode == "record":
                self.web.cassette.save(CASSETTE_KIND, key, {"request_error": str(exc)})
            raise
        except ApiUnavailable as exc:
            if self.mode == "record" and not str(exc).startswith("the API key"):
                self.web.cassette.save(CASSETTE_KIND, key, {"error": str(exc)})
            raise
        if self.mode == "record":
            self.web.cassette.save(CASSETTE_KIND, key, response.to_record())
        return response

    def _live(self, request: ApiRequest) -> ApiResponse:
        url = _fill(request.url, self.env)
        params = {k: _fill(v, self.env) for k, v in request.params.items()}
        headers = {k: str(_fill(v, self.env)) for k, v in request.headers.items()}
        allow_private = bool(getattr(getattr(self.web, "settings", None), "allow_private", False))
        if self.base_url:
            url, headers = self._redirected(url, headers)
            allow_private = True  # the override is the operator's own server
        try:
            status, body = _send(_client(allow_private), url, params, headers, allow_private)
        except (httpx.LocalProtocolError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ApiRequestError(f"the request cannot be sent: {exc}") from None
        except (ValueError, TypeError, UnicodeError) as exc:
            raise ApiRequestError(f"the request cannot be sent: {type(exc).__name__}") from None
        except (httpx.HTTPError, FetchError) as exc:
            raise ApiUnavailable(f"{type(exc).__name__}: {exc}") from None
        return ApiResponse(status, _parse(body))

    def _redirected(self, url: str, headers: dict[str, str]) -> tuple[str, dict[str, str]]:
        original = urlsplit(url)
        base = urlsplit(str(self.base_url))
        moved = original._replace(scheme=base.scheme, netloc=base.netloc)
        return urlunsplit(moved), {**headers, "X-Bfcl-Original-Host": original.netloc}


def _send(
    http: httpx.Client,
    url: str,
    params: dict[str, Any] | None,
    headers: dict[str, str],
    allow_private: bool,
) -> tuple[int, bytes]:
    """GET, following a few redirects (as ``requests`` does), every hop's address checked,
    the whole exchange within :data:`API_TIMEOUT`."""
    with deadline(API_TIMEOUT):
        for _ in range(MAX_REDIRECTS + 1):
            check_address(url, allow_private)
            with http.stream("GET", url, params=params, headers=headers) as response:
                location = response.headers.get("location")
                if response.is_redirect and location:
                    url, params = urljoin(str(response.url), location), None
                    continue
                return response.status_code, read_bounded(response, MAX_RESPONSE_BYTES, "response")
    raise FetchError(f"more than {MAX_REDIRECTS} redirects")


_clients: dict[bool, httpx.Client] = {}
_clients_lock = threading.Lock()


def _client(allow_private: bool) -> httpx.Client:
    """One bounded client per process and address policy: making one (its TLS context) costs
    far more than a request to a fast API."""
    with _clients_lock:
        if allow_private not in _clients:
            resolve = None if allow_private else public_addresses
            _clients[allow_private] = bounded_client(
                resolve=resolve, timeout=API_TIMEOUT, follow_redirects=False
            )
        return _clients[allow_private]


def _parse(body: bytes) -> Any:
    text = body.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
