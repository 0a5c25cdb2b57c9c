"""The replica balancer on its own: choice by expected wait, the circuit breaker, stalls and
probes, with a clock the tests move by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_bfcl.routing import balancer as balancer_module
from pytest_bfcl.routing.affinity import Affinity, prefix_group
from pytest_bfcl.routing.balancer import EJECT_AFTER, STALL_FLOOR, Balancer, Probe, Replica


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Handle:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def make(n: int = 2, probe=None) -> tuple[Balancer, list[Replica], Clock]:
    clock = Clock()
    replicas = [Replica(f"http://r{i}/v1", {}) for i in range(n)]
    return Balancer(replicas, probe=probe, clock=clock), replicas, clock


def serve(balancer: Balancer, replica: Replica, latency: float) -> None:
    balancer.release(replica, latency=latency)


def fail(
    balancer: Balancer,
    replica: Replica,
    times: int = EJECT_AFTER,
    kind: str = "silent",
    message: str = "x",
    lasting: bool = False,
) -> None:
    """Attempts sent to ``replica`` that fail, one after another."""
    for _ in range(times):
        replica.outstanding += 1
        balancer.release(replica, failure=kind, message=message, lasting=lasting)


def probe_when_due(balancer: Balancer, replica: Replica, clock: Clock) -> None:
    """Move the clock to the replica's probe, and wait for the probe to be done."""
    clock.now = replica.probe_at
    balancer.look_after(clock.now)
    _wait_for(lambda: not replica.probing)


def test_equal_replicas_share_requests_in_flight():
    balancer, _, _ = make(3)
    picked = Counter(balancer.acquire().base_url for _ in range(30))
    assert set(picked.values()) == {10}


def test_a_slower_replica_gets_fewer_requests_in_flight():
    balancer, (fast, slow), _ = make(2)
    for _ in range(5):  # both have answered: 0.1 s and 0.3 s
        serve(balancer, balancer.acquire(avoid=slow), 0.1)
    for _ in range(5):
        serve(balancer, balancer.acquire(avoid=fast), 0.3)
    # 0.1 s and 0.3 s answers, so the slow one's average is three times the fast one's
    assert fast.latency == pytest.approx(0.1) and slow.latency == pytest.approx(0.3)
    for _ in range(32):
        balancer.acquire()
    assert fast.outstanding == 24 and slow.outstanding == 8  # equal expected waits


def test_a_replica_without_answers_gets_the_others_average():
    balancer, (known, new), _ = make(2)
    serve(balancer, balancer.acquire(avoid=new), 0.2)
    assert balancer.acquire() is new  # 1 x 0.2 (assumed) ties 1 x 0.2: picked longest ago
    assert balancer.acquire() is known


def test_a_conversation_s_steps_stay_on_the_replica_that_served_it():
    balancer, replicas, _ = make(3)
    for _ in replicas:
        serve(balancer, balancer.acquire(), 0.1)  # every replica has answered
    first = balancer.acquire(conversation="multi_turn_base_0")
    serve(balancer, first, 0.1)
    for _ in range(5):
        balancer.acquire()  # other entries' requests spread over the replicas
    # each replica now has 1 or 2 in flight; the conversation goes back to its own
    for _ in range(4):
        step = balancer.acquire(conversation="multi_turn_base_0")
        assert step is first
        serve(balancer, step, 0.1)
    assert balancer.affinity.counts() == {"kept": 4, "moved": 0}
    # single-turn entries (no conversation) still go where the wait is least
    least = min(replicas, key=lambda r: (r.outstanding, r.picked))
    assert balancer.acquire() is least


def test_a_conversation_moves_when_its_replica_is_more_than_four_requests_busier():
    balancer, (a, b), _ = make(2)
    serve(balancer, balancer.acquire(avoid=b), 0.125)
    serve(balancer, balancer.acquire(avoid=a), 0.125)
    assert balancer.acquire(avoid=b, conversation="c") is a
    serve(balancer, a, 0.125)
    for _ in range(4):
        balancer.acquire(avoid=b)  # a: 4 in flight, b: none
    # a's wait (0.625 s) is four requests longer than b's (0.125 s): it stays
    assert balancer.acquire(conversation="c") is a
    balancer.acquire(avoid=b)  # a: 6 in flight
    step = balancer.acquire(conversation="c")
    assert step is b  # a's wait (0.875 s) is more than four requests longer than b's
    serve(balancer, step, 0.125)
    for _ in range(7):
        balancer.acquire(avoid=a)  # b: 7 in flight, a: 6 -> b's wait is 1.0 s, a's 0.875 s
    assert balancer.acquire(conversation="c") is b  # within four requests' time: stays
    assert balancer.affinity.counts() == {"kept": 2, "moved": 1}
    assert balancer.affinity.counts(a) == {"kept": 1, "moved": 1}
    assert [(r["kept"], r["moved"]) for r in balancer.stats()] == [(1, 1), (1, 0)]


def test_a_first_step_goes_where_its_prefix_is_cached_within_the_bound():
    balancer, (a, b, c), _ = make(3)
    for _ in range(3):
        serve(balancer, balancer.acquire(), 0.125)
    tools = prefix_group({"tools": [{"name": "cd"}], "messages": [{"role": "user"}]})
    other = prefix_group({"tools": [{"name": "ls"}], "messages": [{"role": "user"}]})
    assert tools != other
    assert balancer.acquire(avoid=a, conversation="c1", group=lambda: tools) in (b, c)
    home = b if b.outstanding else c
    # a new conversation with the same tools goes where they are cached, though busier
    assert balancer.acquire(conversation="c2", group=lambda: tools) is home
    # another prefix goes where the wait is least
    assert balancer.acquire(conversation="c3", group=lambda: other) is not home
    for _ in range(3):  # c2's next steps: home has up to 5 in flight, within the bound
        assert balancer.acquire(conversation="c2") is home
    # a replica with none is more than four requests' time less busy: it takes the next one
    assert balancer.acquire(conversation="c4", group=lambda: tools) is not home


def test_a_first_step_goes_to_the_least_loaded_of_the_replicas_with_its_prefix():
    balancer, (a, b), _ = make(2)
    for _ in range(2):
        serve(balancer, balancer.acquire(), 0.125)
    tools = prefix_group({"tools": [{"name": "cd"}], "messages": [{"role": "user"}]})
    assert balancer.acquire(avoid=b, conversation="c1", group=lambda: tools) is a
    assert balancer.acquire(avoid=a, conversation="c2", group=lambda: tools) is b  # the latest
    for _ in range(2):
        balancer.acquire(avoid=a)  # b: 3 in flight, a: 1; both within the bound
    assert balancer.acquire(conversation="c3", group=lambda: tools) is a


def test_a_conversation_leaves_a_replica_out_of_rotation_and_stays_where_it_went():
    balancer, (a, b), _ = make(2)
    serve(balancer, balancer.acquire(avoid=b, conversation="c"), 0.1)
    fail(balancer, a)
    assert a.state == "ejected"
    moved = balancer.acquire(conversation="c")
    assert moved is b
    serve(balancer, moved, 0.1)
    a.state = "in rotation"  # back (as after a probe)
    assert balancer.acquire(conversation="c") is b
    # a step that has just failed on its replica is retried elsewhere
    assert balancer.acquire(avoid=b, conversation="c") is a


def test_the_prefix_is_worked_out_for_first_steps_only():
    balancer, _, _ = make(2)
    asked = []
    for _ in range(3):  # three steps of one conversation
        replica = balancer.acquire(conversation="c", group=lambda: asked.append(1) or "p")
        serve(balancer, replica, 0.125)
    assert asked == [1]


def test_the_conversations_remembered_are_bounded():
    affinity: Affinity[str] = Affinity(remembered=3)
    for n in range(5):
        affinity.note(f"c{n}", "r")
    assert len(affinity._served) == 3 and "c0" not in affinity._served


def test_failures_in_a_row_eject_and_a_probe_brings_it_back():
    probes = []
    balancer, (bad, good), clock = make(2, probe=lambda r: probes.append(r) or Probe(True))
    for _ in range(EJECT_AFTER):
        replica = balancer.acquire(avoid=good)
        assert replica is bad
        balancer.release(bad, failure="silent", message="HTTP 500")
    assert bad.state == "ejected" and bad.ejections == 1
    assert "3 failed requests in a row: HTTP 500" in (bad.reason or "")
    assert all(balancer.acquire() is good for _ in range(5))  # out of rotation
    clock.now += balancer_module.FIRST_COOLDOWN + 0.1
    balancer.look_after(clock.now)
    _wait_for(lambda: bad.state == "half-open")
    assert probes == [bad]
    for _ in range(5):
        balancer.release(good, latency=0.1)  # good is busy: the half-open one gets a trial
    trial = balancer.acquire()
    assert trial is bad
    assert balancer.acquire() is good  # one trial at a time
    serve(balancer, trial, 0.1)
    assert bad.state == "in rotation" and bad.reason is None


def test_a_failed_trial_ejects_again_with_a_longer_cooldown():
    balancer, (bad, _good), clock = make(2, probe=lambda r: Probe(True))
    fail(balancer, bad, message="timeout")
    first = bad.cooldown
    probe_when_due(balancer, bad, clock)
    assert bad.state == "half-open"
    fail(balancer, bad, times=1, message="timeout again")
    assert bad.state == "ejected" and bad.cooldown == 2 * first
    assert bad.ejections == 1  # the same ejection, longer
    assert "trial request failed" in (bad.reason or "")


def test_a_failing_probe_keeps_it_out():
    balancer, (bad, _good), clock = make(2, probe=lambda r: Probe(False))
    fail(balancer, bad)
    probe_when_due(balancer, bad, clock)
    assert bad.state == "ejected" and bad.probe_at > clock.now and bad.fatal is None


def test_a_probe_refused_counts_as_a_refusal():
    balancer, (bad, good), clock = make(2, probe=lambda r: Probe(False, "connection refused"))
    fail(balancer, bad, message="reset")
    probe_when_due(balancer, bad, clock)
    assert bad.fatal == "connection refused" and balancer.refused_everywhere() is None
    fail(balancer, good, times=2, kind="fatal", message="refused too")
    assert balancer.refused_everywhere() == "connection refused; refused too"


def test_with_nothing_usable_each_replica_is_tried_in_turn():
    """Both replicas out of rotation: a request that failed on one goes to the other, so both
    show whether they refuse connections (a server that is down everywhere is then known)."""
    balancer, (a, b), _ = make(2)
    for replica in (a, b):
        fail(balancer, replica, message="reset")
    a.probe_at -= 10  # due back first: chosen first, and again but for the rule
    first = balancer.acquire()
    assert first is a
    balancer.release(first, failure="fatal", message="refused")
    assert balancer.acquire(avoid=first) is b


def test_lasting_refusals_give_up_for_good_and_refused_connections_are_probed():
    balancer, (key, down), _ = make(2)
    for replica, lasting in ((key, True), (down, False)):
        fail(balancer, replica, times=2, kind="fatal", message=f"no {lasting}", lasting=lasting)
    assert key.state == "given up" and down.state == "ejected"
    assert balancer.refused_everywhere() == "no True; no False"
    down.outstanding += 1
    balancer.release(down, latency=0.1)  # it answers again (a trial after a probe)
    assert balancer.refused_everywhere() is None
    assert balancer.acquire() is down  # the given-up one never comes back


def test_with_nothing_usable_the_one_due_back_first_is_used():
    balancer, (a, b), clock = make(2)
    for replica in (a, b):
        fail(balancer, replica)
    b.probe_at = clock.now - 1
    assert balancer.acquire() is b
    balancer.give_up(a, "died")
    balancer.give_up(b, "died")
    with pytest.raises(LookupError):
        balancer.acquire()


def test_busy_and_refused_answers_show_the_server_is_alive():
    balancer, (a, _b), _ = make(2)
    fail(balancer, a, times=EJECT_AFTER - 1)
    fail(balancer, a, times=1, kind="busy")
    fail(balancer, a, times=1)
    assert a.state == "in rotation" and a.failures == Counter(silent=3, busy=1)


def stall(probe_answers: bool):
    """One replica with three requests in flight goes quiet while the other answers."""
    balancer, (stuck, fine), clock = make(2, probe=lambda r: Probe(probe_answers))
    handles = [Handle() for _ in range(3)]
    for handle in handles:
        balancer.acquire(avoid=fine, handle=handle)
    assert stuck.outstanding == 3
    other = Handle()
    balancer.acquire(avoid=stuck, handle=other)
    clock.now += 1
    balancer.release(fine, handle=other, latency=0.5)  # the other one answers meanwhile
    clock.now += STALL_FLOOR - 1.5
    balancer.look_after(clock.now)
    assert stuck.state == "in rotation"  # not yet: under the floor
    clock.now += 1
    balancer.look_after(clock.now)
    return balancer, stuck, handles, other


def test_a_stalled_replica_that_misses_its_probe_is_ejected_and_its_requests_cancelled():
    _, stuck, handles, other = stall(probe_answers=False)
    _wait_for(lambda: stuck.state == "ejected")
    assert "no answer for 10 s with 3 requests" in (stuck.reason or "")
    assert all(h.cancelled for h in handles) and not other.cancelled
    assert stuck.ejections == 1


def test_a_quiet_replica_that_answers_its_probe_is_only_busy():
    """A long generation: the replica answers the probe, keeps its requests, and its silence
    becomes a recent answer time, so it is not suspected again at once."""
    balancer, stuck, handles, _ = stall(probe_answers=True)
    _wait_for(lambda: stuck.state == "in rotation")
    assert not any(h.cancelled for h in handles) and stuck.ejections == 0
    assert balancer.stall_threshold() >= 5 * 10


def test_silent_everywhere_needs_every_replica_silent():
    balancer, (a, b), clock = make(2)
    for replica in (a, b):
        balancer.acquire(avoid=b if replica is a else a)
    fail(balancer, a, times=3, message="timeout")
    clock.now += 20
    assert balancer.silent_everywhere(3, 15.0) is None  # b has not failed yet
    fail(balancer, b, times=3, message="timeout")
    assert balancer.silent_everywhere(3, 15.0) == pytest.approx(20.0)
    assert balancer.silent_everywhere(3, 30.0) is None  # not silent for long enough
    b.outstanding += 1
    balancer.release(b, latency=0.1)
    assert balancer.silent_everywhere(3, 15.0) is None


def test_an_answer_brings_a_replica_back_whatever_its_state():
    balancer, (a, _b), _ = make(2)
    fail(balancer, a, message="500")
    assert a.state == "ejected"
    a.outstanding += 1
    balancer.release(a, latency=0.2)
    assert a.state == "in rotation" and a.reason is None


def test_a_probe_that_answers_forgets_old_refusals():
    balancer, (a, _b), clock = make(2, probe=lambda r: Probe(True))
    fail(balancer, a, times=2, kind="fatal", message="connection refused")
    assert a.fatal and a.state == "ejected"
    probe_when_due(balancer, a, clock)
    assert a.state == "half-open" and a.fatal is None and balancer.refused_everywhere() is None


def test_slow_answers_everywhere_are_not_a_stall():
    balancer, (a, b), clock = make(2)
    balancer.acquire(avoid=b)
    balancer.acquire(avoid=a)
    clock.now += 60
    balancer.look_after(clock.now)  # neither answered: that is the model's pace
    assert a.state == b.state == "in rotation"


def test_the_stall_threshold_follows_the_slowest_recent_answer():
    balancer, (a, _b), _ = make(2)
    a.outstanding += 1
    balancer.release(a, latency=4.0)
    assert balancer.stall_threshold() == 5 * 4.0


def test_stats_count_per_replica():
    balancer, _, _ = make(2)
    r = balancer.acquire()
    balancer.release(r, latency=0.25)
    r2 = balancer.acquire(avoid=r)
    balancer.release(r2, failure="silent", message="x")
    stats = {s["base_url"]: s for s in balancer.stats()}
    assert stats[r.base_url]["answered"] == 1 and stats[r.base_url]["latencies"] == [0.25]
    assert stats[r2.base_url]["errors"] == {"silent": 1} and stats[r2.base_url]["requests"] == 1
    assert {s["state"] for s in stats.values()} == {"in rotation"}


def _wait_for(condition, seconds: float = 5.0) -> None:
    import time

    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.01)
