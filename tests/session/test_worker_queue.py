"""An xdist worker reads what is queued for it (to start generating it) from xdist's worker
loop, found once among the plugins, not before every item."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from pytest_bfcl.session.worker import XdistQueueWatch


class _Queue:
    def __init__(self, indices: list[int]) -> None:
        self.indices = indices

    @contextlib.contextmanager
    def lock(self) -> Iterator[list[int]]:
        yield self.indices


def test_the_worker_loop_is_found_once_and_its_new_items_read():
    loop = SimpleNamespace(torun=_Queue([1, 2]), nextitem_index=0)
    looks: list[int] = []

    def get_plugins() -> list[Any]:
        looks.append(1)
        return [object(), loop]

    config: Any = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugins=get_plugins))
    session: Any = SimpleNamespace(items=["a", "b", "c"])
    watch = XdistQueueWatch()
    assert watch.new_items(config, session) == ["a", "b", "c"]
    loop.torun.indices.pop(0)  # one item taken: nothing new
    assert watch.new_items(config, session) == []
    loop.torun.indices.extend([0, 1, 2])  # more dealt
    assert watch.new_items(config, session) == ["a", "c", "a", "b", "c"]
    assert len(looks) == 1


def test_without_a_worker_loop_nothing_is_read():
    config: Any = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugins=lambda: [object()]))
    assert XdistQueueWatch().new_items(config, SimpleNamespace(items=[])) == []  # type: ignore[arg-type]
