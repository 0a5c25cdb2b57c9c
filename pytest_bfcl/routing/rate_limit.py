"""Waiting out rate limits, within a budget: a 429 is the server saying "later", so it costs
an entry none of its retries while the limit may still lift; but a limit that has not lifted
after ``budget`` seconds (no answer at all since the first 429) stops the run with one line,
as a dead server does, instead of producing hours of errors.

``Retry-After`` is honoured (never retried earlier than asked), up to :data:`RETRY_AFTER_CAP`
per wait, and no wait runs past the budget, so the stop comes on time."""

from __future__ import annotations

import random
import threading
import time

RATE_LIMIT_BUDGET = 300.0  # seconds of nothing but 429s before the run stops
RETRY_AFTER_CAP = 60.0  # the longest single wait, whatever Retry-After asks
BACKOFF_CAP = 60.0


class RateLimitWatch:
    """Since when every answer has been a 429 (run-wide, across entries and replicas)."""

    def __init__(self, budget: float | None = None) -> None:
        self.budget = RATE_LIMIT_BUDGET if budget is None else budget
        self._since: float | None = None  # the first 429 since the last answer
        self.limited_answers = 0  # 429s since the last answer
        self._lock = threading.Lock()

    def answered(self) -> None:
        with self._lock:
            self._since, self.limited_answers = None, 0

    def limited(self, failure: object) -> str | None:
        """Count a 429; why the run stops when the limit has outlasted the budget."""
        now = time.monotonic()
        with self._lock:
            if self._since is None:
                self._since = now
            self.limited_answers += 1
            waited, count = now - self._since, self.limited_answers
        if waited < self.budget:
            return None
        return (
            f"the model server has answered nothing but HTTP 429 (a rate limit or quota) for "
            f"{waited:.0f} s ({count} answers), longer than the {self.budget:g} s a run waits "
            f"for a limit to lift; raise the limit, lower --bfcl-concurrency, or run later "
            f"(last: {failure})"
        )

    def left(self) -> float:
        """Seconds of the budget left (the whole budget when nothing is limited now)."""
        with self._lock:
            since = self._since
        return self.budget if since is None else self.budget - (time.monotonic() - since)

    def entry_may_wait(self, entry_started: float) -> bool:
        """Whether a 429 spares the entry's retries: only while the entry itself has waited
        less than the budget (a request that is over a per-request limit never passes)."""
        return time.monotonic() - entry_started < self.budget


def retry_delay(backoff: float, attempt: int, retry_after: float | None, left: float) -> float:
    """Exponential back-off with jitter; at least the server's ``Retry-After`` (capped);
    never past what is left of the rate-limit budget (then the next 429 stops the run)."""
    delay = min(backoff * 2**attempt, BACKOFF_CAP) * (0.5 + random.random() / 2)
    if retry_after is not None:
        delay = max(delay, min(retry_after, RETRY_AFTER_CAP))
    return max(min(delay, left), 0.0)
