"""What a run needs of a category before it scores any of its entries: the ids, the cluster of
each entry, and what each weighs. Derived from the validated data once and kept beside the
unpacked release, so that a process that scores none of the entries (an xdist controller) or
scores them later (one process) neither parses nor validates the data for it.

An index holds the size and modification time of every file the category was read from and
belongs to this version of the package; a file changed since, a file gone, another version or
an unreadable index is a miss, and the category is read from the data (which checks it) and
indexed again. Only the pinned release's categories are indexed: a project's own categories
and a ``--bfcl-data`` directory are read every time, as before. Writing is best effort: a
read-only cache only costs the reading.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ValidationError

from pytest_bfcl import __version__
from pytest_bfcl.dataset.categories import CATEGORIES, category_of_id
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.files import read_small_text, write_text_atomic

INDEX_FORMAT = 1  # bump when what an index holds, or how a value is derived, changes
INDEX_MAX = 64 << 20  # bytes of one index file read at most
FOLDER = ".pytest-bfcl-index"

Stat = tuple[int, int]  # size, modification time (ns)


class CategoryIndex(BaseModel):
    files: dict[str, Stat]  # data file (relative to the data folder) -> its stat then
    ids: list[str]
    clusters: list[str]
    requests: list[int]  # the scheduler's rough count of each entry's requests
    costs: list[int]  # each entry's scoring weight (its kind's ``scoring_cost``)

    def weights(self) -> dict[str, tuple[int, int]]:
        """Entry id -> (requests, scoring cost)."""
        return dict(zip(self.ids, zip(self.requests, self.costs, strict=True), strict=True))


Derive = Callable[[Entry], tuple[str, int, int]]  # an entry's cluster, requests, scoring cost


class DataIndex:
    """The indexes of a dataset's categories, read or made on demand (see the module)."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        root = dataset.source.unpacked_root
        indexed = dataset.source.sha256 is not None and root is not None
        self.folder = root / FOLDER / f"{__version__}-{INDEX_FORMAT}" if indexed and root else None
        self._held: dict[str, CategoryIndex | None] = {}

    def get(self, category: str) -> CategoryIndex | None:
        """The category's index when a valid one is kept; None otherwise."""
        if category not in self._held:
            self._held[category] = self._read(category)
        return self._held[category]

    def make(self, category: str, derive: Derive) -> CategoryIndex | None:
        """Read the category's entries and ground truth from the data (which checks them),
        and keep their index; None where the category is not indexed (the data is read all
        the same)."""
        # a category read before cannot say which files it came from; not every one is indexed
        indexable = self._path(category) is not None and not self.dataset.loaded(category)
        reads: contextlib.AbstractContextManager[set[str]] = (
            self.dataset.recording_reads() if indexable else contextlib.nullcontext(set())
        )
        with reads as read:
            entries = self.dataset.entries(category)
            self.dataset.answers(category)
        if not indexable or any(e.category != category for e in entries):
            return None  # entries that say another category: the index could not stand for it
        derived = [derive(e) for e in entries]
        index = CategoryIndex(
            files={rel: stat for rel in sorted(read) if (stat := self._stat(rel)) is not None},
            ids=[e.id for e in entries],
            clusters=[d[0] for d in derived],
            requests=[d[1] for d in derived],
            costs=[d[2] for d in derived],
        )
        if len(index.files) != len(read):
            return None
        self._held[category] = index
        self._write(category, index)
        return index

    def _path(self, category: str) -> Path | None:
        cat = CATEGORIES.get(category)
        if self.folder is None or cat is None or cat.custom:
            return None
        return self.folder / f"{category}.json"

    def _stat(self, rel: str) -> Stat | None:
        try:
            info = os.stat(self.dataset.root / rel)
        except OSError:
            return None
        return info.st_size, info.st_mtime_ns

    def _read(self, category: str) -> CategoryIndex | None:
        path = self._path(category)
        if path is None:
            return None
        try:
            index = CategoryIndex.model_validate_json(read_small_text(path, INDEX_MAX))
        except (OSError, ValueError, ValidationError):
            return None  # none kept, or one unreadable: the data is read instead
        counts = {len(index.clusters), len(index.requests), len(index.costs)}
        if counts != {len(index.ids)} or not index.files or not _ids_fit(index.ids, category):
            return None
        if any(self._stat(rel) != stat for rel, stat in index.files.items()):
            return None
        return index

    def _write(self, category: str, index: CategoryIndex) -> None:
        path = self._path(category)
        if path is None:
            return
        with contextlib.suppress(OSError, ValueError):  # read-only: the next run reads the data
            write_text_atomic(path, index.model_dump_json())


def _ids_fit(ids: list[str], category: str) -> bool:
    """Whether the ids are what the data of the category would give: unique, and each of
    the category (an index edited by hand must not make items the data has not)."""
    return len(set(ids)) == len(ids) and all(category_of_id(i) == category for i in ids)
