"""What one pytest invocation asks of pytest-bfcl, read as pytest reads its own arguments.

BFCL entries live under the node path ``bfcl/`` of the rootdir (``bfcl/<category>::<id>``).
They run when the paths pytest collects reach that node path (``pytest``, ``pytest .`` or
``pytest bfcl`` from the rootdir; ``testpaths`` naming ``bfcl``), or when a ``--bfcl-*``
option is given; never because of ``bfcl_*`` ini keys alone, so ``pytest tests/`` in a
repository that configures the plugin runs the repository's own tests and nothing else.
Paths in ``bfcl_*`` ini keys are read from the ini file's directory, as pytest reads
``testpaths``. Plain Python: pytest imports this in every run.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

NODE_DIR = "bfcl"  # the node path of the entries, under the rootdir

# Settings fields that are paths: their ini values are relative to the ini file's directory.
INI_PATH_FIELDS = frozenset(
    {
        "data_dir",
        "report_path",
        "html_path",
        "baseline_path",
        "save_baseline_path",
        "csv_dir",
        "chart_path",
        "cache_dir",
        "results_dir",
        "server_log",
        "vllm_log",
        "web_cassette",
        "memory_dir",
    }
)
# Settings fields that are words for a server's command line: a word naming a file or folder
# that exists beside the ini file (``--chat-template tools.jinja``, ``--lora-modules
# a=adapters/a``) is that file, wherever pytest runs.
INI_WORD_FIELDS = frozenset({"vllm_args"})
REPLAY_PREFIX = "replay:"
DEFAULT_CACHE_DIR = ".bfcl-cache"  # the settings' default, relative to the ini file's directory

INVOCATION_KEY = pytest.StashKey["Invocation"]()


@dataclass(frozen=True)
class Invocation:
    """Whether the entries run, and which: ``selectors`` are the node ids narrower than
    ``bfcl/`` that the command line names (none: every selected entry)."""

    asked: bool
    selectors: tuple[str, ...] = ()


def _absolute(base: Path, arg: str) -> Path:
    return Path(os.path.normpath(base / arg.split("::", 1)[0]))


def _node_id(root: Path, arg: str, path: Path) -> str:
    """``bfcl/simple_python::simple_python_3`` from an argument naming it from anywhere."""
    rest = arg.split("::", 1)[1] if "::" in arg else None
    relative = path.relative_to(root).as_posix()
    return f"{relative}::{rest}" if rest else relative


def read_invocation(config: pytest.Config, option_given: bool) -> Invocation:
    """What this invocation asks; arguments naming entries (``bfcl/<category>[::<id>]``, or
    ``bfcl`` where no such directory exists) are taken out of pytest's own arguments, which
    would look for them on disk."""
    if getattr(config.option, "pyargs", False):
        return Invocation(asked=option_given)
    root = Path(os.path.normpath(config.rootpath))
    node_root = root / NODE_DIR
    base = Path(config.invocation_params.dir)
    reaches_all = False
    selectors: list[str] = []
    kept: list[str] = []
    for arg in config.args:
        path = _absolute(base, arg)
        if path == node_root and "::" not in arg:
            reaches_all = True
            if node_root.exists():
                kept.append(arg)  # a real directory: pytest collects what else it holds
            continue
        if node_root in path.parents or path == node_root:
            selectors.append(_node_id(root, arg, path))
            continue
        if path in node_root.parents:
            reaches_all = True
        kept.append(arg)
    if len(kept) != len(config.args):
        config.args[:] = kept
    asked = option_given or reaches_all or bool(selectors)
    return Invocation(asked=asked, selectors=() if reaches_all else tuple(selectors))


def selected(nodeid: str, selectors: tuple[str, ...]) -> bool:
    """Whether an entry's node id is one the selectors name (a category, or one entry)."""
    return any(nodeid == s or nodeid.startswith((f"{s}::", f"{s}/")) for s in selectors)


def ini_value_in_place(config: pytest.Config, name: str, value: object) -> object:
    """An ini value, with a relative path made relative to the ini file's directory (the
    rootdir), as pytest does for ``testpaths``: so ``pytest`` from a subdirectory, or
    ``pytest repo`` from its parent, finds the baseline and writes the reports where the ini
    file says."""
    if not isinstance(value, str) or not value or config.inipath is None:
        return value
    here = Path(config.inipath).parent
    base = Path(config.invocation_params.dir)
    if here == base:
        return value  # the common case: the same path either way, printed as written

    def placed(path: str) -> str:
        # relative to where pytest runs, as every path the run prints is
        return path if Path(path).is_absolute() else os.path.relpath(here / path, base)

    if name in INI_PATH_FIELDS:
        return placed(value)
    if name in INI_WORD_FIELDS:
        return _files_placed(value, here, placed)
    if name == "model" and value.startswith(REPLAY_PREFIX) and value[len(REPLAY_PREFIX) :]:
        return REPLAY_PREFIX + placed(value[len(REPLAY_PREFIX) :])
    return value


def default_cache_dir(config: pytest.Config) -> str | None:
    """Where the response cache goes when no option places it: beside the ini file, as pytest
    keeps ``.pytest_cache`` in the rootdir, so a run from a subdirectory reuses the answers of
    runs from the top (``None``: the settings' default, where pytest runs, is that place). An
    ini "file" that is none (``-c /dev/null``) places nothing: the rootdir pytest chose, never
    the device's directory."""
    inipath = Path(config.inipath) if config.inipath is not None else None
    if inipath is None or inipath.is_file():
        placed = ini_value_in_place(config, "cache_dir", DEFAULT_CACHE_DIR)
        return None if placed == DEFAULT_CACHE_DIR else str(placed)
    root = Path(os.path.normpath(config.rootpath))
    base = Path(config.invocation_params.dir)
    if root == inipath.parent:  # older pytest: the rootdir is the ini "file"'s directory
        return None
    placed = os.path.relpath(root / DEFAULT_CACHE_DIR, base)
    return None if placed == DEFAULT_CACHE_DIR else placed


def _files_placed(value: str, here: Path, placed: Callable[[str], str]) -> str:
    """Server arguments with each relative path that exists in ``here`` placed by ``placed``:
    a word on its own, a flag's ``=value``, or a ``name=path`` pair's path. Other words (a hub
    model name, a number) are kept; a value that is not shell words is left for the settings'
    check to report."""
    try:
        words = shlex.split(value)
    except ValueError:
        return value
    changed = False
    for index, word in enumerate(words):
        head, sep, tail = word.rpartition("=")
        path = tail if sep else word
        if not path or path.startswith("-") or Path(path).is_absolute():
            continue
        if path not in (".", "..") and (here / path).exists():
            words[index] = head + sep + placed(path)
            changed = True
    return shlex.join(words) if changed else value
