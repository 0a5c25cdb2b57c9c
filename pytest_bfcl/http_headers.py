"""HTTP header names: what a header name may be, and the names a request needs for itself
(HTTP's own, and the API's key and account), which no option may take over."""

from __future__ import annotations

import re

# Headers HTTP and the API use: a session header of one of these names would replace the key,
# the host, the body's type or length (every conversation broken), or a cookie.
# fmt: off
RESERVED_HEADERS = frozenset((
    "accept", "accept-encoding", "authorization", "connection", "content-encoding",
    "content-length", "content-type", "cookie", "expect", "host", "idempotency-key",
    "keep-alive", "openai-beta", "openai-organization", "openai-project", "te", "trailer",
    "transfer-encoding", "upgrade", "user-agent",
))
# fmt: on
RESERVED_HEADER_PREFIXES = ("proxy-", "x-stainless-", "sec-", "x-forwarded-")
HEADER_NAME_LIMIT = 64  # characters: a router's session header is a short name
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]*")  # RFC 9110's token ("" allowed: no header)


def is_header_name(text: str) -> bool:
    """Whether ``text`` can name a header: a token, and a short one."""
    return len(text) <= HEADER_NAME_LIMIT and _TOKEN.fullmatch(text) is not None


def is_reserved_header(name: str) -> bool:
    """Whether the request itself needs the header ``name`` (any case)."""
    lower = name.lower()
    return lower in RESERVED_HEADERS or lower.startswith(RESERVED_HEADER_PREFIXES)
