"""The reference's result layout, in one place: where a model's result files, memory
snapshots, checkpoints and prerequisite results go under its result root.

``<root>/<group>/BFCL_v4_<category>_result.json`` for every category, except memory, whose
files live under ``<root>/agentic/memory/<backend>/`` with the scenario snapshots in
``memory_snapshot/`` and the prerequisite conversations' results beside them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pytest_bfcl.dataset.categories import CATEGORIES, Kind

# The group directories a model's result root holds.
GROUP_DIRS = ("non_live", "live", "multi_turn", "agentic", "format_sensitivity", "executable")


def model_dir_name(model: str) -> str:
    """A model name as a directory name (the reference replaces path separators)."""
    return re.sub(r"[^\w.\-]+", "_", model).strip("_") or "model"


def memory_backend(category: str) -> str:
    """A memory category's store (``memory_kv`` -> ``kv``), as the category declares it."""
    return CATEGORIES[category].variant


# Every result file's name: BFCL_v4_<category>_result.json (memory prerequisites included).
RESULT_FILE_GLOB = "BFCL_v4_*_result.json"


def result_file_name(category: str) -> str:
    return f"BFCL_v4_{category}_result.json"


def category_file(category: str) -> PurePosixPath:
    """A category's result file relative to a model's result root."""
    cat = CATEGORIES[category]
    directory = cat.group
    if cat.kind is Kind.MEMORY:
        directory = f"agentic/memory/{memory_backend(category)}"
    return PurePosixPath(directory, result_file_name(category))


@dataclass(frozen=True)
class ResultLayout:
    """The files of one model's result root."""

    root: Path

    def category_file(self, category: str) -> Path:
        return self.root / category_file(category)

    def memory_dir(self, category: str) -> Path:
        return self.root / "agentic" / "memory" / memory_backend(category)

    def snapshot_dir(self, category: str) -> Path:
        return self.memory_dir(category) / "memory_snapshot"

    def checkpoint_dir(self, category: str) -> Path:
        return self.snapshot_dir(category) / "prereq_checkpoints"

    def final_snapshot(self, category: str, scenario: str) -> Path:
        return self.snapshot_dir(category) / f"{scenario}_final.json"

    def prerequisite_file(self, category: str) -> Path:
        backend = memory_backend(category)
        return self.memory_dir(category) / result_file_name(f"memory_{backend}_prereq")

    def holds_results(self) -> bool:
        """Whether this looks like a model's result root: a directory of one of the
        benchmark's groups, or a result file in a directory of a project's own group."""
        if any((self.root / group).is_dir() for group in GROUP_DIRS):
            return True
        return any(self.root.glob(f"*/{RESULT_FILE_GLOB}"))
