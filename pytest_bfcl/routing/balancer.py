"""Spreading requests over the replicas of a model server, and taking failing ones out of
rotation.

Choice: each request goes to the usable replica with the least expected wait, ``(requests
outstanding + 1) x its typical latency`` (an exponentially weighted average of its recent
answers, which grows as its queue does). A replica with a fixed batch that is slower, or more
loaded, gets fewer requests; equal replicas get equal shares. This is the "peak EWMA" rule of
service meshes, without their decay timers: the run keeps every replica busy, so the average
stays fresh. A conversation's steps stay where its history is cached, within a bound on
the extra load (:mod:`.affinity`).

Failures (a circuit breaker per replica):

- ``EJECT_AFTER`` failed attempts in a row without an answer (timeouts, dropped connections,
  5xx), or ``FATAL_AFTER`` refused connections, take it out of rotation (*ejected*).
- A replica with requests in flight and no answer for much longer than any replica's recent
  answers took, while the others answer, is *suspected* of a stall: it gets no new requests
  and is probed at once with a one-token request (a server that is only busy answers it
  within the probe's time; a hung one does not). Answered: back in rotation, and its silence
  counts as a recent answer time, so a long generation is not suspected again and again.
  Unanswered: ejected, and its requests in flight are cancelled, so that they are retried on
  the others at once instead of waiting for their timeout.
- An ejected replica is probed after a cool-down that doubles with each failure (up to
  ``MAX_COOLDOWN``); when the probe answers, one request is tried on it (*half-open*); its
  answer brings the replica back, a failure ejects it again. Any answer from a replica out of
  rotation brings it back.
- A replica that rejects the run (401, 403, 404, an unknown host) or whose process died is
  *given up* for good.

When no replica is usable, requests still go to the one that should recover first (the
caller's retries and back-off apply, and the caller decides when the whole server is down).

Per replica the balancer counts requests, answers, failures by kind, latencies and
ejections; :meth:`Balancer.stats` reports them.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pytest_bfcl.routing.affinity import Affinity

State = Literal["in rotation", "suspected", "ejected", "half-open", "given up"]

EJECT_AFTER = 3  # failed attempts in a row that take a replica out of rotation
FATAL_AFTER = 2  # refusals in a row (connection refused, 401/403/404) that count as lasting
FIRST_COOLDOWN = 1.0  # seconds before the first probe of an ejected replica
MAX_COOLDOWN = 60.0
STALL_FLOOR = 10.0  # never call a replica stalled sooner than this (seconds)
STALL_FACTOR = 5.0  # ... nor sooner than this many times the slowest recent answer
PROBE_TIMEOUT = 10.0  # a one-token request; a busy server answers it well within this
MONITOR_INTERVAL = 0.25  # seconds between looks for stalls and probes due
_EWMA_WEIGHT = 0.2  # weight of a new latency in the average
_RECENT = 64  # answers remembered for the stall threshold


def endpoint_url(base_url: str, route: str) -> str:
    """``route`` appended to the path of ``base_url``, its query kept after it (gateways such
    as Azure's take ``?api-version=...`` on the base URL)."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + route))


@dataclass(frozen=True)
class Probe:
    """What a probe of a replica out of rotation found: it answers, or not (and whether it
    refused the connection, which counts as a refusal of the run's requests, or is gone for
    good: its process died)."""

    alive: bool
    refusal: str | None = None
    gone: str | None = None


@dataclass(eq=False)
class Replica:
    """One server address and what the balancer knows about it."""

    base_url: str  # as the user wrote it (or the default), for messages
    headers: dict[str, str]
    state: State = "in rotation"
    outstanding: int = 0
    latency: float | None = None  # weighted average of answered requests, seconds
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=_RECENT))
    failure_streak: int = 0  # failed attempts in a row
    fatal_streak: int = 0  # refusals in a row
    fatal: str | None = None  # the last refusal, while it lasts; why it was given up
    reason: str | None = None  # why it is out of rotation
    cooldown: float = FIRST_COOLDOWN
    probe_at: float = 0.0  # when an ejected replica is probed next
    probing: bool = False
    busy_since: float | None = None  # outstanding went from 0 to 1
    last_answer: float | None = None
    first_sent: float | None = None  # its first request
    picked: int = 0  # a sequence number: ties go to the replica picked longest ago
    attempts: set[Any] = field(default_factory=set)  # cancel handles of requests in flight
    # counters for the report
    requests: int = 0
    answered: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    ejections: int = 0

    @property
    def chat_url(self) -> str:
        return endpoint_url(self.base_url, "/chat/completions")

    @property
    def models_url(self) -> str:
        return endpoint_url(self.base_url, "/models")

    @property
    def usable(self) -> bool:
        """Takes requests now (a half-open replica takes one at a time)."""
        if self.state == "in rotation":
            return True
        return self.state == "half-open" and self.outstanding == 0

    def expected_wait(self, typical: float) -> float:
        return (self.outstanding + 1) * (self.latency if self.latency is not None else typical)


class Balancer:
    """Chooses a replica per request and keeps each one's circuit breaker."""

    def __init__(
        self,
        replicas: Iterable[Replica],
        probe: Callable[[Replica], Probe] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.replicas = list(replicas)
        self._probe = probe
        self._clock = clock
        self._lock = threading.Lock()
        self._sequence = 0
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self.affinity: Affinity[Replica] = Affinity()

    # -- choosing ---------------------------------------------------------------------------

    def acquire(
        self,
        avoid: Replica | None = None,
        handle: Any = None,
        conversation: str | None = None,
        group: Callable[[], str] | None = None,
    ) -> Replica:
        """The replica for the next attempt (not ``avoid``, the one that just failed, when
        another is usable); ``handle`` (a cancel handle) lets a stall cancel the attempt;
        ``conversation``: the step's conversation, kept on one replica, ``group``: gives the
        prefix its prompt starts with (:mod:`.affinity`). Raises :class:`LookupError` when every
        replica is given up."""
        with self._lock:
            replica = self._choose(avoid, conversation, group)
            self.affinity.note(conversation, replica)
            self._sequence += 1
            replica.picked = self._sequence
            now = self._clock()
            if replica.outstanding == 0:
                replica.busy_since = now
            if replica.first_sent is None:
                replica.first_sent = now
            replica.outstanding += 1
            replica.requests += 1
            if handle is not None:
                replica.attempts.add(handle)
        self._start_monitor()
        return replica

    def _choose(
        self, avoid: Replica | None, conversation: str | None, group: Callable[[], str] | None
    ) -> Replica:
        usable = [r for r in self.replicas if r.usable]
        if avoid is not None and len(usable) > 1:
            usable = [r for r in usable if r is not avoid]
        if usable:
            typical = self._typical_latency()
            best = min(usable, key=lambda r: (r.expected_wait(typical), r.picked))
            return self.affinity.choose(
                conversation,
                group,
                usable,
                best,
                wait=lambda r: r.expected_wait(typical),
                step_time=lambda r: r.latency if r.latency is not None else typical,
            )
        waiting = [r for r in self.replicas if r.state != "given up"]
        if not waiting:
            raise LookupError("every replica is given up")
        # None usable: the one due back first, but not the one that just failed this request
        # (the caller backs off between attempts). Trying each in turn is also how every
        # replica shows whether it refuses connections, so that a server whose replicas all
        # refuse is known to be down.
        if avoid is not None and len(waiting) > 1:
            waiting = [r for r in waiting if r is not avoid]
        return min(waiting, key=lambda r: (r.probe_at, r.outstanding, r.picked))

    def _typical_latency(self) -> float:
        """For a replica without answers yet: the others' average (so it gets its share at
        once), or one second."""
        known = [r.latency for r in self.replicas if r.latency is not None]
        return sum(known) / len(known) if known else 1.0

    def has_other_usable(self, replica: Replica) -> bool:
        with self._lock:
            return any(r.usable for r in self.replicas if r is not replica)

    # -- outcomes ---------------------------------------------------------------------------

    def release(
        self,
        replica: Replica,
        handle: Any = None,
        latency: float | None = None,
        failure: str | None = None,
        lasting: bool = False,
        message: str = "",
    ) -> None:
        """The attempt ended: answered (``latency``), or failed with a kind (``silent``,
        ``fatal``, ``busy``, ``refused``, ``cancelled``); ``lasting``: a refusal that no retry
        changes (401/403/404, unknown host)."""
        now = self._clock()
        with self._lock:
            replica.outstanding -= 1
            replica.attempts.discard(handle)
            if failure is None:
                self._answered(replica, now, latency)
            elif failure == "aborted":  # the caller stopped (Ctrl-C): says nothing of the server
                replica.failures[failure] += 1
            elif failure in ("busy", "refused"):
                self._alive(replica, now)  # an HTTP answer: the server is there
                replica.failures[failure] += 1
            else:
                replica.failures[failure] += 1
                self._failed(replica, now, failure, lasting, message)

    def _answered(self, replica: Replica, now: float, latency: float | None) -> None:
        replica.answered += 1
        if latency is not None:
            replica.latencies.append(latency)
            replica.recent.append(latency)
            previous = replica.latency
            replica.latency = (
                latency if previous is None else previous + _EWMA_WEIGHT * (latency - previous)
            )
        self._alive(replica, now)

    def _alive(self, replica: Replica, now: float) -> None:
        replica.last_answer = now
        replica.failure_streak = replica.fatal_streak = 0
        replica.fatal = None
        if replica.state in ("half-open", "ejected", "suspected"):
            replica.state, replica.reason = "in rotation", None
            replica.cooldown = FIRST_COOLDOWN

    def _failed(self, replica: Replica, now: float, kind: str, lasting: bool, message: str) -> None:
        if replica.state == "given up":
            return
        replica.failure_streak += 1
        if kind == "fatal":
            replica.fatal_streak += 1
            if replica.fatal_streak >= FATAL_AFTER:
                replica.fatal = message
                if lasting:
                    self._give_up_locked(replica, message)
                    return
        if replica.state == "half-open":
            self._eject(replica, now, f"its trial request failed: {message}")
        elif replica.state in ("in rotation", "suspected") and (
            replica.failure_streak >= EJECT_AFTER or replica.fatal is not None
        ):
            self._eject(
                replica, now, f"{replica.failure_streak} failed requests in a row: {message}"
            )

    def _eject(self, replica: Replica, now: float, reason: str) -> None:
        if replica.state == "half-open":
            replica.cooldown = min(replica.cooldown * 2, MAX_COOLDOWN)
        else:
            replica.ejections += 1
        replica.state, replica.reason = "ejected", reason
        replica.probe_at = now + replica.cooldown

    def eject(self, replica: Replica, reason: str) -> None:
        """Out of rotation until a probe finds it answering (it failed the check before the
        run)."""
        with self._lock:
            if replica.state == "in rotation":
                self._eject(replica, self._clock(), reason)

    def give_up(self, replica: Replica, reason: str) -> None:
        """Out of rotation for good (its process died, it rejects the run)."""
        with self._lock:
            self._give_up_locked(replica, reason)

    def _give_up_locked(self, replica: Replica, reason: str) -> None:
        if replica.state != "given up":
            replica.ejections += int(replica.state in ("in rotation", "suspected"))
            replica.state, replica.reason, replica.fatal = "given up", reason, reason

    # -- the whole server -------------------------------------------------------------------

    def silent_everywhere(self, failures: int, window: float) -> float | None:
        """When no replica is left that answers: each is given up, refuses connections, or
        failed ``failures`` attempts in a row with no answer for ``window`` seconds. Returns
        the shortest of their silences, else ``None``."""
        now = self._clock()
        silences = []
        with self._lock:
            for r in self.replicas:
                if r.state == "given up" or r.fatal:
                    continue
                since = r.last_answer if r.last_answer is not None else r.first_sent
                silence = now - since if since is not None else 0.0
                if r.failure_streak < failures or silence < window:
                    return None
                silences.append(silence)
        return min(silences, default=0.0)

    def refused_everywhere(self) -> str | None:
        """When every replica is given up, or refuses connections again and again: why, one
        reason each; else ``None``."""
        with self._lock:
            if all(r.fatal for r in self.replicas):
                return "; ".join(dict.fromkeys(r.fatal for r in self.replicas if r.fatal))
        return None

    # -- stalls and probes ------------------------------------------------------------------

    def _start_monitor(self) -> None:
        if self._monitor is not None or len(self.replicas) < 2 or self._stop.is_set():
            return
        with self._lock:
            if self._monitor is not None:
                return
            self._monitor = threading.Thread(target=self._watch, name="bfcl-balancer", daemon=True)
            self._monitor.start()

    def _watch(self) -> None:
        while not self._stop.wait(MONITOR_INTERVAL):
            self.look_after(self._clock())

    def look_after(self, now: float) -> None:
        """Eject stalled replicas (cancelling their requests in flight) and probe the ejected
        ones whose cool-down is over."""
        to_probe: list[Replica] = []
        with self._lock:
            threshold = self.stall_threshold()
            for replica in self.replicas:
                busy = replica.state in ("in rotation", "half-open")
                if busy and self._stalled(replica, now, threshold):
                    silent = now - max(replica.busy_since or now, replica.last_answer or 0.0)
                    replica.state = "suspected"
                    replica.reason = (
                        f"no answer for {silent:.0f} s with {replica.outstanding} requests in "
                        "flight while the other replicas answered, and none to a probe"
                    )
                    replica.probing = True
                    to_probe.append(replica)
                elif replica.state == "ejected" and not replica.probing and now >= replica.probe_at:
                    replica.probing = True
                    to_probe.append(replica)
        for replica in to_probe:
            threading.Thread(
                target=self._run_probe, args=(replica,), name="bfcl-probe", daemon=True
            ).start()

    def stall_threshold(self) -> float:
        slowest = max((max(r.recent) for r in self.replicas if r.recent), default=0.0)
        return max(STALL_FLOOR, STALL_FACTOR * slowest)

    def _stalled(self, replica: Replica, now: float, threshold: float) -> bool:
        if replica.outstanding == 0 or replica.busy_since is None:
            return False
        quiet_since = max(replica.busy_since, replica.last_answer or 0.0)
        if now - quiet_since < threshold:
            return False
        # Only when others answered meanwhile: a slow answer everywhere is the model's pace.
        return any(
            r is not replica and r.last_answer is not None and r.last_answer > quiet_since
            for r in self.replicas
        )

    def _run_probe(self, replica: Replica) -> None:
        started = self._clock()
        try:
            found = self._probe(replica) if self._probe is not None else Probe(True)
        except Exception:
            found = Probe(False)
        to_cancel: list[Any] = []
        with self._lock:
            replica.probing = False
            now = self._clock()
            if found.gone:
                self._give_up_locked(replica, found.gone)
                to_cancel = list(replica.attempts)
            elif replica.state == "suspected":
                if found.alive:  # only busy: its silence is the pace of its answers now
                    silent = started - max(
                        replica.busy_since or started, replica.last_answer or 0.0
                    )
                    replica.recent.append(max(silent, 0.0))
                    replica.state, replica.reason, replica.busy_since = "in rotation", None, now
                else:
                    reason = replica.reason or "no answer"
                    self._eject(replica, now, reason)
                    to_cancel = list(replica.attempts)
            elif replica.state == "ejected":
                if found.alive:
                    replica.state = "half-open"
                    replica.fatal, replica.fatal_streak = None, 0
                else:
                    if found.refusal:
                        replica.fatal = found.refusal
                    replica.cooldown = min(replica.cooldown * 2, MAX_COOLDOWN)
                    replica.probe_at = now + replica.cooldown
        for handle in to_cancel:
            handle.cancel()

    def close(self) -> None:
        self._stop.set()

    # -- the report -------------------------------------------------------------------------
    def stats(self) -> list[dict[str, Any]]:
        """Per replica: requests, answers, failures by kind, latencies (seconds, rounded to
        the millisecond; for percentiles across processes), ejections, state, and
        :mod:`.affinity`'s conversation steps kept on it and moved elsewhere."""
        with self._lock:
            return [
                {
                    "base_url": r.base_url,
                    "requests": r.requests,
                    "answered": r.answered,
                    "errors": dict(sorted(r.failures.items())),
                    "latencies": [round(v, 3) for v in r.latencies],
                    "ejections": r.ejections,
                    "state": r.state,
                    "reason": r.reason,
                    **self.affinity.counts(r),
                }
                for r in self.replicas
            ]
