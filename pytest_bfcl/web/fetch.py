"""Fetching one web page for a model, within bounds: http and https only, a timeout, a size
limit, a few redirects, and no local or private addresses (a model must not be able to reach
the machine's own services or the internal network through the search tools)."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlparse

import requests

FETCH_TIMEOUT = 20.0  # seconds, as the benchmark's fetch tool
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
    """The page could not be fetched; the message is what the model is told."""


@dataclass(frozen=True)
class Page:
    url: str  # after redirects
    status: int
    text: str  # decoded body


def check_address(url: str, allow_private: bool) -> None:
    """Refuse anything but http(s) to a public address."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise FetchError(f"only http and https URLs can be fetched, not {url!r}")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parsed.hostname, parsed.port or 443, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"cannot resolve {parsed.hostname}: {exc}") from None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if not address.is_global or address.is_multicast:
            raise FetchError(
                f"refusing to fetch {url}: {parsed.hostname} resolves to the non-public "
                f"address {address}"
            )


def fetch_page(
    url: str,
    *,
    allow_private: bool = False,
    timeout: float = FETCH_TIMEOUT,
    max_bytes: int = MAX_PAGE_BYTES,
    session: requests.Session | None = None,
) -> Page:
    """GET a page, following redirects one hop at a time so that every hop is checked."""
    http = session or requests.Session()
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        check_address(current, allow_private)
        try:
            response = http.get(
                current,
                headers=BROWSER_HEADERS,
                timeout=timeout,
                allow_redirects=False,
                stream=True,
            )
        except requests.RequestException as exc:
            raise FetchError(str(exc)) from None
        with response:
            if response.is_redirect and response.headers.get("location"):
                current = urljoin(current, response.headers["location"])
                continue
            try:
                response.raise_for_status()
            except requests.HTTPError as exc:
                raise FetchError(str(exc)) from None
            body = _read_bounded(response, max_bytes)
            response._content = body  # let requests decode the text as it would
            return Page(url=current, status=response.status_code, text=response.text)
    raise FetchError(f"more than {MAX_REDIRECTS} redirects starting at {url}")


def _read_bounded(response: requests.Response, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_content(chunk_size=65536):
            size += len(chunk)
            if size > max_bytes:
                raise FetchError(f"the page is larger than {max_bytes} bytes")
            chunks.append(chunk)
    except requests.RequestException as exc:
        raise FetchError(str(exc)) from None
    return b"".join(chunks)
