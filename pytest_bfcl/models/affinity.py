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
- is not far more loaded than the others: its expected wait is at most ``STAY_FOR``
  requests' time (its own typical answer time) longer than the least expected wait of a usable
  replica.

The bound keeps the balancer's load-aware choice in charge: a step never waits more than one
request's time longer than it would on the least loaded replica, so a replica that slows down
(a long queue, a stall under way, a slower GPU) sheds conversations as its expected wait grows,
and a replica that left rotation sheds them at once. Why one request: a step sent elsewhere
computes its whole history again, which on a long conversation costs about as much as the
step's own answer; waiting up to that long where the history is cached is no loss, waiting
longer is. (A bound relative to the load, such as twice the least wait, would let a replica
with eight requests queued keep eight more.) First steps and single-turn entries carry no
conversation and go where the wait is least; as conversations end and new ones start there,
the load evens out by itself.

The map from conversation to replica is bounded (the least recently used conversations are
forgotten first; a run has at most its concurrency in flight).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

STAY_FOR = 1.0  # requests' time a step may wait longer to stay where its history is cached
REMEMBERED = 16_384  # conversations remembered (least recently used forgotten first)

R = TypeVar("R")


class Affinity(Generic[R]):
    """Which replica served each conversation last, and whether its next step goes there."""

    def __init__(self, stay_for: float = STAY_FOR, remembered: int = REMEMBERED) -> None:
        self.stay_for = stay_for
        self.remembered = remembered
        self._served: OrderedDict[str, R] = OrderedDict()
        self.kept = 0  # steps sent back to their conversation's replica
        self.moved = 0  # steps sent elsewhere (their replica unusable, failed or too loaded)

    def choose(
        self,
        conversation: str | None,
        usable: Sequence[R],
        best: R,
        wait: Callable[[R], float],
        step_time: Callable[[R], float],
    ) -> R:
        """The replica for a step: the conversation's own when the rule allows, else ``best``
        (the least expected ``wait`` among ``usable``, which excludes a replica just failed
        on); ``step_time``: a replica's typical answer time."""
        if conversation is None:
            return best
        own = self._served.get(conversation)
        if own is None:
            return best
        if own is best or (
            own in usable and wait(own) <= wait(best) + self.stay_for * step_time(own)
        ):
            self.kept += 1
            return own
        self.moved += 1
        return best

    def note(self, conversation: str | None, replica: R) -> None:
        """``replica`` serves the conversation's step now (its next step goes there)."""
        if conversation is None:
            return
        self._served[conversation] = replica
        self._served.move_to_end(conversation)
        while len(self._served) > self.remembered:
            self._served.popitem(last=False)

    def counts(self) -> dict[str, int]:
        return {"kept": self.kept, "moved": self.moved}
