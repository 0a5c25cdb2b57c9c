"""Paths where a file the run writes must not go: a device, a folder, a symbolic link; and
whether one is still what it was."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def device(tmp_path: Path) -> Path:
    """A character device of the test's own (as root; a FIFO otherwise: both are no file)."""
    path = tmp_path / "null"
    if os.geteuid() == 0:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        os.mkfifo(path)
    return path


def not_a_file(tmp_path: Path, kind: str) -> Path:
    if kind == "device":
        return device(tmp_path)
    if kind == "folder":
        (tmp_path / "folder").mkdir()
        return tmp_path / "folder"
    (tmp_path / "real.html").write_text("kept")
    (tmp_path / "link.html").symlink_to(tmp_path / "real.html")
    return tmp_path / "link.html"


def unchanged(path: Path, kind: str) -> bool:
    info = os.lstat(path)
    if kind == "device":
        return stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)
    if kind == "folder":
        return stat.S_ISDIR(info.st_mode)
    return stat.S_ISLNK(info.st_mode) and path.read_text() == "kept"
