"""Conversation affinity: the steps of one conversation go to one replica, where the server's
prefix cache still holds its history.

Every step of a multi-turn, memory or web-search conversation resends the whole history. A
server with a prefix cache (vLLM's automatic prefix caching, SGLang's radix cache) answers the
next step of a conversation it served with the history's prefill already done; any other
replica computes it again, which on a long history costs more than the step's own generation.

The rule: a step goes to the replica that served the conversation's previous step while that
replica

- is usable (in rotation, or half-open and free: a replica out of rotation loses its
  conversations, which move to the least loaded one and stay there),
- is not the replica the step has just failed on, and
- is not far more loaded than the others: its expected wait is at most ``STAY_FOR`` (four)
  requests' time (its own typical answer time) longer than the least expected wait of a usable
  replica.

The bound keeps the balancer's load-aware choice in charge: a step never waits more than four
requests' time longer than it would on the least loaded replica, so a replica that slows down
(a long queue, a stall under way, a slower GPU) sheds conversations as its expected wait grows,
and a replica that left rotation sheds them at once. Why four: a step sent elsewhere computes
its whole history again (tools, system prompt, every message and every answer so far: a
server caches what it generated with the prompt), which on a multi-turn conversation costs
two or three requests' time (about 25,000 characters a step on multi_turn_base), paid in a
slot of the other replica as well as in the step's wait; the expected wait counts every
request in flight as queued, which a server answering a batch at once does not make wait.
Measured on simulated servers with such a prefix cache
(``benchmarks/test_prefix_affinity.py``, four replicas of 8 against one of 32), a bound of two
moved 45-81 of 1,265 steps and finished 1.00-1.20x the one replica's time; four moved 12-19
and finished 0.91-1.18x (1.02-1.11x on a less loaded machine, where two and three, with the
least loaded replica of a prefix, gave 1.06-1.07x moving more). (A bound relative to the
load, such as twice the least wait, would let a replica with eight requests queued keep eight
more.)

The first step of a conversation has no replica yet. Under the same bound it goes to a
replica that has served a conversation starting with the same prefix (the same tools, or the
same system prompt: what a chat template lays out first), which has that prefix cached, the
least loaded of them; otherwise where the wait is least. Single-turn entries go where the
wait is least. As conversations end and new ones start on the least loaded replicas, the load
evens out by itself.

The maps from conversations and prefixes to replicas are bounded (the least recently used
forgotten first; a run has at most its concurrency in flight).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

STAY_FOR = 4.0  # requests' time a step may wait longer to stay where its prompt is cached
REMEMBERED = 16_384  # conversations remembered (least recently used forgotten first)

R = TypeVar("R")


def prefix_group(request: dict[str, Any]) -> str:
    """What a request's prompt starts with, as a key: its tools and its system message (a chat
    template renders them first), hashed."""
    messages = request.get("messages") or [{}]
    system = messages[0] if messages[0].get("role") in ("system", "developer") else None
    text = json.dumps([request.get("tools"), system], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


class Affinity(Generic[R]):
    """Which replica served each conversation last, and whether its next step goes there."""

    def __init__(self, stay_for: float = STAY_FOR, remembered: int = REMEMBERED) -> None:
        self.stay_for = stay_for
        self.remembered = remembered
        self._served: OrderedDict[str, R] = OrderedDict()
        self._prefixes: OrderedDict[str, list[R]] = OrderedDict()  # replicas that served each
        self._group: str | None = None  # the prefix of the first step being placed
        # per replica: steps sent back to it (their conversation's), and steps of its
        # conversations sent elsewhere (it was unusable, had just failed or was too loaded)
        self.kept: Counter[R] = Counter()
        self.moved: Counter[R] = Counter()

    def choose(
        self,
        conversation: str | None,
        group: Callable[[], str] | None,
        usable: Sequence[R],
        best: R,
        wait: Callable[[R], float],
        step_time: Callable[[R], float],
    ) -> R:
        """The replica for a step: the conversation's own when the rule allows, else ``best``
        (the least expected ``wait`` among ``usable``, which excludes a replica just failed
        on); ``group``: gives the prefix its prompt starts with (:func:`prefix_group`; asked
        for first steps only: it costs a pass over the tools); ``step_time``: a replica's
        typical answer time."""

        def allowed(replica: R) -> bool:
            bound = wait(best) + self.stay_for * step_time(replica)
            return replica is best or (replica in usable and wait(replica) <= bound)

        if conversation is None:
            return best
        own = self._served.get(conversation)
        if own is None:  # a first step: a replica with its prefix cached, if one is allowed
            self._group = group() if group is not None else None
            homes = self._prefixes.get(self._group, []) if self._group is not None else []
            # of those allowed, the least loaded: a prefix that every replica has cached soon
            # must not draw new conversations to the one that served it last
            return min((r for r in homes if allowed(r)), key=wait, default=best)
        if allowed(own):
            self.kept[own] += 1
            return own
        self.moved[own] += 1
        return best

    def note(self, conversation: str | None, replica: R) -> None:
        """``replica`` serves the conversation's step now (its next step goes there); a first
        step's prefix is cached there from now on."""
        group, self._group = self._group, None
        if conversation is None:
            return
        if group is not None and conversation not in self._served:
            homes = [replica, *(r for r in self._prefixes.pop(group, []) if r is not replica)]
            self._prefixes[group] = homes  # the latest first
            while len(self._prefixes) > self.remembered:
                self._prefixes.popitem(last=False)
        self._served[conversation] = replica
        self._served.move_to_end(conversation)
        while len(self._served) > self.remembered:
            self._served.popitem(last=False)

    def counts(self, replica: R | None = None) -> dict[str, int]:
        """Steps kept and moved, of one replica's conversations or of all."""
        if replica is not None:
            return {"kept": self.kept[replica], "moved": self.moved[replica]}
        return {"kept": self.kept.total(), "moved": self.moved.total()}
