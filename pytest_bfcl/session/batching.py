"""The events of BFCL items travel from an xdist worker to the controller in few messages.

xdist sends six messages per test (its start, three reports, its end, and the protocol's
completion), each serialised value by value in Python by its channel library, read by a
thread of the controller and handed to the controller's loop through a queue. For a stored
result that costs more than scoring it. A worker whose controller can receive them keeps the
events of the BFCL items it finishes and sends them packed by :mod:`marshal` inside the last
item's completion message; the controller replays them, in their order, through xdist's own
handlers (each item's completion included), so its hooks see what they saw before.

Kept events leave at the latest when :data:`ITEMS_PER_MESSAGE` items are finished, when
:data:`HELD_S` seconds have passed since the first of them finished, when the worker's queue
is empty (xdist's worker would wait for more work, which a controller under its own
scheduling sends only once it has seen items complete), or when the worker is about to wait
for a generation (:meth:`EventBatch.flush`): progress on the controller's terminal lags by a
fraction of a second at most. Anything else, an event that is not one of a BFCL item's, or
events marshal refuses, travels as xdist sends it (the events kept so far first, so the order
holds).
"""

from __future__ import annotations

import marshal
import time
from collections.abc import Callable
from typing import Any

import pytest

from pytest_bfcl.names import PLUGIN_NAME
from pytest_bfcl.pytest_private import report_from_fields
from pytest_bfcl.session.transport import CompactReader, is_compact

BATCHED = "bfcl_events"  # the keyword of the completion message that carries the events
_KEPT = ("logstart", "testreport", "logfinish")
_COMPLETE = "runtest_protocol_complete"
# Finished items whose events one message carries at most (about 2 KB each, packed).
ITEMS_PER_MESSAGE = 64
# Seconds the events of a finished item are held at most, checked as the next one finishes.
HELD_S = 0.5

Send = Callable[..., None]
Event = tuple[str, dict[str, Any]]


def _never_idle() -> bool:
    return False


class EventBatch:
    """A worker's ``sendevent``, keeping BFCL items' events until they leave together.

    ``idle_next``: whether the worker would wait for more work after the item that just
    finished (its queue is empty), when what is kept must leave."""

    def __init__(
        self,
        send: Send,
        prefix: str,
        idle_next: Callable[[], bool] = _never_idle,
        items_per_message: int = ITEMS_PER_MESSAGE,
        held_s: float = HELD_S,
    ) -> None:
        self._send = send
        self._prefix = prefix
        self._idle_next = idle_next
        self._items_per_message = items_per_message
        self._held_s = held_s
        self._done: list[Event] = []  # events of finished items, each ending in its completion
        self._open: list[Event] = []  # the events so far of the item running now
        self._in_item = False
        self._finished = 0
        self._first_finished = 0.0

    def __call__(self, name: str, **kwargs: Any) -> None:
        if (
            name == "logstart"
            and not self._in_item
            and str(kwargs.get("nodeid", "")).startswith(self._prefix)
        ):
            self._in_item = True
            self._open.append((name, kwargs))
            return
        if self._in_item and name in _KEPT:
            self._open.append((name, kwargs))
            return
        if self._in_item and name == _COMPLETE:
            self._finish_item((name, kwargs))
            return
        self.flush()
        self._send_each(self._open)  # an item interrupted by another event: as xdist would
        self._open = []
        self._send(name, **kwargs)

    def _finish_item(self, complete: Event) -> None:
        self._done += self._open
        self._done.append(complete)
        self._open, self._in_item = [], False
        self._finished += 1
        now = time.monotonic()
        if self._finished == 1:
            self._first_finished = now
        if (
            self._finished >= self._items_per_message
            or now - self._first_finished >= self._held_s
            or self._idle_next()
        ):
            self.flush()

    def flush(self) -> None:
        """Send the finished items' events now: in one message, or one message each where
        marshal refuses a value (as xdist would have sent them)."""
        done, self._done, self._finished = self._done, [], 0
        if not done:
            return
        (name, kwargs), carried = done[-1], done[:-1]
        try:
            packed = marshal.dumps(carried, 4)
        except ValueError:  # a value only xdist's serialiser takes
            self._send_each(done)
        else:
            self._send(name, **kwargs, **{BATCHED: packed})

    def _send_each(self, events: list[Event]) -> None:
        for name, kwargs in events:
            self._send(name, **kwargs)


def worker_interactor(config: pytest.Config) -> Any:
    """xdist's plugin in a worker that sends its events, or None (another xdist shape)."""
    for plugin in config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor" and callable(
            getattr(plugin, "sendevent", None)
        ):
            return plugin
    return None


def _queue_empty(interactor: Any) -> Callable[[], bool]:
    """Whether the worker's queue of dealt items is empty (it would wait for more work);
    always True where the queue is of another shape, so that nothing is ever held then."""
    queue = getattr(interactor, "torun", None)
    if queue is None or not callable(getattr(queue, "lock", None)):
        return lambda: True

    def empty() -> bool:
        try:
            with queue.lock() as pending:
                return not pending
        except Exception:  # an internal of xdist's: never fatal
            return True

    return empty


def batch_worker_events(config: pytest.Config, prefix: str) -> EventBatch | None:
    """Send BFCL items' events in few messages from this worker; None where xdist's worker is
    of a shape this does not know (it then sends them as before)."""
    interactor = worker_interactor(config)
    if interactor is None:
        return None
    batch = EventBatch(interactor.sendevent, prefix, _queue_empty(interactor))
    interactor.sendevent = batch
    return batch


def receive_batched_events(config: pytest.Config) -> bool:
    """Let this xdist controller replay the events a worker batched (:class:`EventBatch`);
    False where its loop is of a shape this does not know (workers then do not batch)."""
    dsession = config.pluginmanager.get_plugin("dsession")
    handlers = ("worker_logstart", "worker_testreport", "worker_logfinish", "worker_" + _COMPLETE)
    if dsession is None or not all(callable(getattr(dsession, h, None)) for h in handlers):
        return False
    complete = getattr(dsession, "worker_" + _COMPLETE)
    report_from = _report_reader(config)

    def replayed(node: Any, **kwargs: Any) -> None:
        packed = kwargs.pop(BATCHED, None)
        if packed is not None:
            for name, event in marshal.loads(packed):
                if name == "testreport":
                    dsession.worker_testreport(node=node, rep=report_from(event["data"]))
                elif name == _COMPLETE:
                    complete(node=node, **event)
                else:
                    getattr(dsession, "worker_" + name)(node=node, **event)
        complete(node=node, **kwargs)

    setattr(dsession, "worker_" + _COMPLETE, replayed)
    return True


def queue_events_unlogged(node: Any) -> None:
    """xdist's controller writes every event a worker sends into a log line (``notify_inproc``
    formats it) before it knows whether ``--debug`` logs it: for a batch that is the text of
    its packed events, a few hundred kilobytes made and thrown away each time (0.28 G
    instructions on 4,441 entries, 4% of the controller's). Where the node logs nothing, its
    events are queued as xdist queues them, without that line."""
    log, put = getattr(node, "log", None), getattr(node, "putevent", None)
    own = getattr(node, "notify_inproc", None)
    if getattr(log, "enabled", True) or not (callable(put) and callable(own)):
        return  # logging (--debug), or a node of another shape: as xdist does it

    def notify_inproc(eventname: str, **kwargs: Any) -> None:
        put((eventname, kwargs))

    node.notify_inproc = notify_inproc


def only_pytest_implements(hook: Any) -> bool:
    """Whether no plugin implements this report hook (reading or writing a report on its way
    between processes) but pytest's own (``reports``; ``subtests``, for its own kind only) and
    this one: what another plugin reads or adds must not be bypassed."""
    impls = getattr(hook, "get_hookimpls", None)
    names = {impl.plugin_name for impl in impls()} if callable(impls) else {"?"}
    return names <= {"reports", "subtests", PLUGIN_NAME}


def _report_reader(config: pytest.Config) -> Callable[[dict[str, Any]], Any]:
    """What turns a batched report back into a report: pytest's own reader called directly
    where no other plugin reads reports (the hook's dispatch costs as much as the reading, for
    three reports per entry), else the hook. pytest's subtests plugin reads only its own kind,
    which its data names (``_report_type``)."""
    hook = config.hook

    def by_hook(data: dict[str, Any]) -> Any:
        return hook.pytest_report_from_serializable(config=config, data=data)

    if not only_pytest_implements(hook.pytest_report_from_serializable):
        return by_hook
    compact = CompactReader()

    def direct(data: dict[str, Any]) -> Any:
        if is_compact(data):
            return compact(data)
        if data.get("$report_type") == "TestReport" and "_report_type" not in data:
            return report_from_fields(data)
        return by_hook(data)  # packed (transport.py), or another kind of report

    return direct


def crash_note(message: str) -> str:
    """xdist's line for a BFCL item whose worker died, with what batching changes about it:
    the item xdist names is the first of that worker's it had not heard of, which a worker
    holding finished items' events may have finished; LoadScheduling runs the worker's other
    pending items again."""
    return (
        f"{message}, or on an entry after it: a worker sends the results of up to "
        f"{ITEMS_PER_MESSAGE} finished BFCL entries in one message, and those it held when it "
        "died are scheduled again with its other pending entries"
    )
