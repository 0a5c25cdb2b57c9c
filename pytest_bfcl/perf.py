"""Small performance helpers shared by loading, collection and the end of a run."""

from __future__ import annotations

import atexit
import contextlib
import gc
import threading
from collections.abc import Iterator

# Set when the process runs one session to its end (see :func:`allow_freezing`).
_freezing_allowed = False


def allow_freezing() -> None:
    """Declare that this process runs one pytest session to its end (pytest's own command
    line, an xdist worker): what :func:`paused_gc` builds may then be frozen."""
    global _freezing_allowed
    _freezing_allowed = True


def forbid_freezing() -> None:
    """The session is over: later sessions in this process decide for themselves (and the
    collector runs on its own again)."""
    global _freezing_allowed
    _freezing_allowed = False
    resume_collector()


# Threads inside paused_gc (the main thread collecting, a generation thread loading answers):
# the collector comes back on when the last one leaves.
_pauses = 0
_pauses_lock = threading.Lock()
_enabled_before = True


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects (parsed data,
    pytest items): they form no cycles, and the collector would rescan them again and again
    (measured: about a fifth of collection time, a third of data loading). Where freezing is
    allowed they are frozen on the way out: the first collection after the pause would
    otherwise walk all of them at once (0.2 s after parsing a 4,441-entry selection)."""
    global _pauses, _enabled_before
    with _pauses_lock:
        if _pauses == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pauses_lock:
            _pauses -= 1
            if _pauses == 0:
                if _freezing_allowed:
                    gc.freeze()
                if _enabled_before:
                    gc.enable()


_exit_registered = False


def quick_interpreter_exit() -> None:
    """At interpreter exit, move every object out of the collector's reach before Python
    tears the heap down: its final collections otherwise walk the whole heap (the parsed data,
    thousands of items and their results) again and again, which took 1.6 s of a 3,641-entry
    run's 27 s. Objects are still freed by reference counting; only cycles left at exit are
    not collected, which the process's end makes moot. Registered once per process."""
    global _exit_registered
    if not _exit_registered:
        atexit.register(gc.freeze)
        _exit_registered = True


def freeze_long_lived() -> None:
    """Move what exists now (parsed data, collected items) out of the cyclic collector's
    reach: it lives until the process ends, and every full collection would walk it again,
    pytest's two at the end of a session included (0.5 s of a 4,441-entry scoring run, 0.1 s
    of a 600-entry one). Objects made later (each test's) are collected as usual. Only where
    freezing is allowed (:func:`allow_freezing`): inside another program (pytester) the
    session's cycles would be kept until that program exits."""
    if _freezing_allowed:
        gc.freeze()


def collect_and_freeze() -> None:
    """At the end of a session that owns its process: one full collection, then what is left
    out of the collector's reach. pytest's two closing collections (looking for unraisable
    exceptions) otherwise walk every report, junit element and record the run kept (0.17 s
    of a 4,441-entry run with reports); now they walk what the closing part makes. Garbage
    with a failing ``__del__`` is found by this collection, while pytest's hook for
    unraisable exceptions is still in place, and reported as before."""
    if _freezing_allowed:
        gc.collect()
        gc.freeze()


# Entries between two freezes of what a run keeps (see :class:`FreezeAsItGrows`).
FREEZE_EVERY = 1000


class FreezeAsItGrows:
    """Freeze what a running session keeps, every ``every`` finished entries: the reports
    pytest holds to the end, junit's elements, the report rows. Each of the collector's full
    passes otherwise walks all of it again, and a run has several (0.15-0.25 s of a
    4,441-entry run with reports). One full collection comes first, so garbage is never
    frozen; what is frozen and dies later is freed by reference counting as usual (the few
    cycles among it are freed when the process ends). Only where freezing is allowed."""

    def __init__(self, every: int = FREEZE_EVERY) -> None:
        self.every = every
        self._finished = 0

    def entry_finished(self) -> None:
        self._finished += 1
        if self._finished % self.every == 0 and _freezing_allowed:
            gc.collect()
            gc.freeze()


# Whether pause_collector_for_reports turned the collector off (and resume_collector owes it).
_paused_for_reports = False


def pause_collector_for_reports() -> None:
    """Turn the collector's automatic passes off in a process that only reads reports (an xdist
    controller's loop): what it builds there, reports and their rows, forms no cycles, and the
    passes walked them for nothing (on 4,441 entries, 344 passes freed 436 objects in all, for
    0.12 G instructions). :class:`FreezeAsItGrows` still collects every :data:`FREEZE_EVERY`
    entries, so cycles a plugin makes there are freed at that pace. Only where freezing is
    allowed; :func:`resume_collector` undoes it."""
    global _paused_for_reports
    if _freezing_allowed and not _paused_for_reports and gc.isenabled():
        gc.disable()
        _paused_for_reports = True


def resume_collector() -> None:
    """The collector runs on its own again, if :func:`pause_collector_for_reports` stopped it."""
    global _paused_for_reports
    if _paused_for_reports:
        _paused_for_reports = False
        gc.enable()
