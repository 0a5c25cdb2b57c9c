"""HTTP clients whose requests end by a deadline, and whose fetches connect only to the public
address that was checked.

httpx's timeouts bound each socket operation, not the request: a server that sends one byte
a second keeps a request alive forever. Here every read, write and connect of a request gets
at most the time left until the request's deadline (a per-thread value, set with
:func:`deadline`), so connect, send, headers and the whole body share one budget.

The fetch tool also pins connections: the host is resolved once, every address is checked,
and the connection goes to a checked address (TLS still verifies the host name, and the Host
header is unchanged), so a DNS answer that changes between check and connect (rebinding)
cannot reach a private address.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpcore2 as httpcore
import httpx2 as httpx

__all__ = ["Cancel", "bounded_client", "cancellable", "deadline", "detach_cancel", "httpx"]

# host, port -> the addresses a connection may use (raises to refuse the host)
Resolver = Callable[[str, int], list[str]]

_local = threading.local()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every network operation of this thread inside the block ends ``seconds`` from now."""
    previous = getattr(_local, "deadline", None)
    _local.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.deadline = previous


class Cancel:
    """Lets another thread end this thread's request at once (a load balancer taking a stalled
    server out of rotation): the socket the request is using is shut down, which wakes a
    blocked read, and any later read or write of the request fails."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stream: Any = None
        self.cancelled = False
        self.done = False

    def cancel(self) -> None:
        with self._lock:
            if self.done or self.cancelled:
                return
            self.cancelled = True
            stream = self._stream
        if stream is not None:
            _shut(stream)

    def _attach(self, stream: Any, error: type[Exception]) -> None:
        with self._lock:
            if self.cancelled:
                raise error("the request was cancelled")
            self._stream = stream

    def _finish(self) -> None:
        with self._lock:
            self.done = True
            self._stream = None


def _shut(stream: Any) -> None:
    sock = stream.get_extra_info("socket")
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.shutdown(2)  # SHUT_RDWR: a blocked recv returns at once


@contextlib.contextmanager
def cancellable(handle: Cancel) -> Iterator[None]:
    """This thread's network operations inside the block can be ended by ``handle.cancel()``;
    after the block the handle no longer reaches any connection (it may be reused)."""
    previous = getattr(_local, "cancel", None)
    _local.cancel = handle
    try:
        yield
    finally:
        _local.cancel = previous
        handle._finish()


def detach_cancel() -> None:
    """This thread's request has its answer: from now on a cancel reaches nothing (the
    connection goes back to the pool, where another request may take it)."""
    handle = getattr(_local, "cancel", None)
    if handle is not None:
        handle._finish()


def _watch(stream: Any, error: type[Exception]) -> None:
    handle = getattr(_local, "cancel", None)
    if handle is not None:
        handle._attach(stream, error)


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """The operation's timeout, shortened to what is left of the request's deadline."""
    end = getattr(_local, "deadline", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise expired("the request ran past its deadline")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        _watch(self._inner, httpcore.ReadError)
        return bytes(self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout)))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _watch(self._inner, httpcore.WriteError)
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> _DeadlineStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, inner: Any, resolve: Resolver | None) -> None:
        self._inner = inner
        self._resolve = resolve

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _DeadlineStream:
        addresses = self._resolve(host, port) if self._resolve else [host]
        failure: Exception | None = None
        for address in addresses:  # the checked addresses only, never a fresh lookup
            try:
                left = _left(timeout, httpcore.ConnectTimeout)
                stream = self._inner.connect_tcp(address, port, left, local_address, socket_options)
            except httpcore.ConnectError as exc:
                failure = exc
                continue
            return _DeadlineStream(stream)
        raise failure or httpcore.ConnectError(f"no address to connect to for {host}")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> _DeadlineStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _install(transport: Any, resolve: Resolver | None) -> None:
    """Put the deadline backend under one of httpx's transports. httpx offers no argument for
    it; its pool keeps the backend in one attribute that each new connection reads."""
    pool = getattr(transport, "_pool", None)
    if pool is None or not hasattr(pool, "_network_backend"):
        raise RuntimeError(f"cannot bound requests on {type(transport).__name__}")
    # Through a proxy the connection goes to the proxy, which resolves the host itself:
    # pinning would check the proxy's address, so only the deadline applies there.
    proxied = isinstance(pool, httpcore.HTTPProxy | httpcore.SOCKSProxy)
    pool._network_backend = _DeadlineBackend(pool._network_backend, None if proxied else resolve)


def bounded_client(resolve: Resolver | None = None, **options: Any) -> httpx.Client:
    """An ``httpx.Client`` (``options`` passed on) whose requests honour :func:`deadline` and,
    with ``resolve``, connect only to the addresses it returns."""
    client = httpx.Client(**options)
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        if isinstance(transport, httpx.HTTPTransport):
            _install(transport, resolve)
    return client
