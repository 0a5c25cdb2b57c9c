"""Fetching one web page for a model, within bounds: http and https only, a deadline for the
whole fetch (redirects and body included), a size limit, a few redirects, and no local or
private addresses (a model must not be able to reach the machine's own services or the internal
network through the search tools). The address check and the connection use the same DNS
answer: the connection goes to an address that was checked (see
:mod:`pytest_bfcl.web.transport`), so a host that resolves differently the second time (DNS
rebinding) cannot slip through.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlparse

from pytest_bfcl.web.transport import bounded_client, deadline, httpx

FETCH_TIMEOUT = 20.0  # seconds for the whole fetch (the benchmark's is per socket operation)
MAX_PAGE_BYTES = 5_000_000
MAX_REDIRECTS = 5
# Browser-like headers: many sites refuse clients that do not send them.
BROWSER_HEADERS = {
    "User-Agent": (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/112.0.0.0 Safari/537.36"
    ),
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en-US,en;q=0.9",
}


class FetchError(Exception):
    """The page could not be fetched; the message is what the model is told. ``network``:
    the network failed (a timeout, a broken connection), not the page (missing, refused)."""

    def __init__(self, message: str, network: bool = False) -> None:
        super().__init__(message)
        self.network = network


@dataclass(frozen=True)
class Page:
    url: str  # after redirects
    status: int
    text: str  # decoded body


def check_address(url: str, allow_private: bool) -> None:
    """Refuse anything but http(s) to a public address (an early, readable refusal; the
    connection itself checks again, see :func:`public_addresses`)."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise FetchError(f"only http and https URLs can be fetched, not {url!r}")
    if not allow_private:
        public_addresses(parsed.hostname, parsed.port or 443)


def public_addresses(host: str, port: int) -> list[str]:
    """The addresses of ``host``, all of them checked public; the connection uses these."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"cannot resolve {host}: {exc}") from None
    addresses = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if not address.is_global or address.is_multicast:
            raise FetchError(
                f"refusing to fetch from {host}: it resolves to the non-public address {address}"
            )
        addresses.append(str(address))
    return list(dict.fromkeys(addresses))


def fetch_page(
    url: str,
    *,
    allow_private: bool = False,
    timeout: float = FETCH_TIMEOUT,
    max_bytes: int = MAX_PAGE_BYTES,
) -> Page:
    """GET a page, following redirects one hop at a time so that every hop is checked; the
    whole fetch ends within ``timeout`` seconds."""
    resolve = None if allow_private else public_addresses
    with (
        bounded_client(resolve=resolve, timeout=timeout, follow_redirects=False) as http,
        deadline(timeout),
    ):
        return _follow(http, url, allow_private, max_bytes, timeout)


def _follow(
    http: httpx.Client, url: str, allow_private: bool, max_bytes: int, timeout: float
) -> Page:
    current = url
    started = time.monotonic()
    for _ in range(MAX_REDIRECTS + 1):
        check_address(current, allow_private)
        try:
            with http.stream("GET", current, headers=BROWSER_HEADERS) as response:
                if response.is_redirect and response.headers.get("location"):
                    current = urljoin(current, response.headers["location"])
                    continue
                if response.status_code >= 400:
                    raise FetchError(
                        f"{response.status_code} {response.reason_phrase} for url: {current}"
                    )
                body = read_bounded(response, max_bytes)
                return Page(
                    url=current, status=response.status_code, text=_decode(body, response.headers)
                )
        except httpx.TimeoutException:
            spent = time.monotonic() - started
            raise FetchError(
                f"the fetch of {url} did not finish within {timeout:g} s ({spent:.0f} s spent)",
                network=True,
            ) from None
        except httpx.HTTPError as exc:
            # An unknown host is what a made-up link gives: the page's failure, not the network's.
            unknown_host = _caused_by(exc, socket.gaierror)
            raise FetchError(f"{type(exc).__name__}: {exc}", network=not unknown_host) from None
    raise FetchError(f"more than {MAX_REDIRECTS} redirects starting at {url}")


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    current: BaseException | None = exc
    for _ in range(10):  # the chain is short; a cycle cannot loop
        if current is None:
            return False
        if isinstance(current, kind):
            return True
        current = current.__cause__ or current.__context__
    return False


def read_bounded(response: httpx.Response, max_bytes: int, what: str = "page") -> bytes:
    """The body, read as it arrives and refused (:class:`FetchError`) past ``max_bytes``."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(f"the {what} is larger than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _decode(body: bytes, headers: httpx.Headers) -> str:
    """The text as ``requests`` decodes it (the benchmark's client): the declared charset,
    ISO-8859-1 for text without one, else the detected encoding."""
    # Imported here: requests (70 modules) only matters to runs that fetch pages, and comes
    # with the web extra, as the categories that fetch do.
    try:
        import requests.utils
    except ImportError as exc:
        raise FetchError(f"fetching pages needs pytest-bfcl[web] ({exc})") from None

    # types-requests asks for a CaseInsensitiveDict; the function only reads "content-type",
    # which a dict of httpx's (lower-case) header names holds.
    encoding = requests.utils.get_encoding_from_headers(dict(headers))  # type: ignore[arg-type]
    if encoding is None:
        encoding = _detected_encoding(body)
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")


def _detected_encoding(body: bytes) -> str:
    try:
        import charset_normalizer
    except ImportError:  # pragma: no cover - the web extra brings it
        return "utf-8"
    best = charset_normalizer.from_bytes(body).best()
    return best.encoding if best is not None else "utf-8"
