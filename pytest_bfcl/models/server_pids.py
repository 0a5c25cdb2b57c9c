"""The processes of servers the plugin starts, known beyond the session that started them:
a pid file beside each server's log, so that a server a killed session left running (SIGKILL,
an out-of-memory kill) is found and stopped by the next run in that folder; and whether a port
is free, or held by the server the plugin started.

A process is only ever stopped when it is surely the one the plugin started: its process
group's leader has the start time written in the pid file (a pid the system reused for another
program does not), and the session that started it is gone (a run in progress next door keeps
its server). Where the system cannot tell (no ``/proc``), nothing is stopped.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

PID_MARK = "pytest-bfcl started server"
PID_SUFFIX = ".pid"
LEFTOVER_GRACE = 10.0  # seconds a left-over server gets to exit before it is killed
_PROC = Path("/proc")


class PidFile(BaseModel):
    """What the pid file beside a server's log says."""

    kind: str
    name: str
    pid: int  # the server's process, leader of its own process group
    start: str  # its start time, as the system counts it
    owner: int  # the process of the session that started it
    owner_start: str
    log: str
    temp_dir: str | None = None


def pid_file(log_path: Path) -> Path:
    return log_path.with_name(log_path.name + PID_SUFFIX)


def process_start(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot, from ``/proc/PID/stat``), or ``None`` when
    there is no such process or the system does not say."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else None


def group_members(group: int) -> list[int]:
    """The processes whose process group is ``group`` (read from ``/proc``)."""
    members = []
    for entry in _PROC.glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text(errors="replace").rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(group):
            members.append(int(entry.name))
    return members


def write_pid_file(log_path: Path, name: str, pid: int, temp_dir: Path | None) -> None:
    """Record a started server beside its log (nothing where the system gives no start
    times: the next run could not tell it from another process)."""
    start, owner_start = process_start(pid), process_start(os.getpid())
    if start is None or owner_start is None:
        return
    record = PidFile(
        kind=PID_MARK,
        name=name,
        pid=pid,
        start=start,
        owner=os.getpid(),
        owner_start=owner_start,
        log=str(log_path),
        temp_dir=str(temp_dir) if temp_dir is not None else None,
    )
    pid_file(log_path).write_text(record.model_dump_json(), encoding="utf-8")


def remove_pid_file(log_path: Path) -> None:
    pid_file(log_path).unlink(missing_ok=True)


def read_pid_file(path: Path) -> PidFile | None:
    """A pid file the plugin wrote, or ``None`` for any other file."""
    try:
        if path.stat().st_size > 64 << 10:
            return None
        record = PidFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
    return record if record.kind == PID_MARK else None


def stop_left_behind(folder: Path) -> list[str]:
    """Stop the servers that earlier sessions started in ``folder`` and left running (their
    session is gone), remove their temporary folders and pid files; one line for each
    stopped."""
    notes = []
    for path in sorted(folder.glob(f"*{PID_SUFFIX}")) if folder.is_dir() else []:
        record = read_pid_file(path)
        if record is None:
            continue
        if process_start(record.owner) == record.owner_start:
            continue  # its session still runs
        if _stop_group(record):
            notes.append(
                f"pytest-bfcl: stopped {record.name} (pid {record.pid}) that an earlier run "
                f"left running; its log: {record.log}"
            )
        _remove_temp_dir(record, folder)
        path.unlink(missing_ok=True)
    return notes


def _stop_group(record: PidFile) -> bool:
    """Stop the recorded server's process group if it is still there and surely the one
    started; whether anything was stopped."""
    start = process_start(record.pid)
    if start is not None and start != record.start:
        return False  # the pid now belongs to another program
    # The leader gone, a group of that number is still the server's: the system does not give
    # a number out again while a group holds it.
    members = group_members(record.pid)
    if not members:
        return False
    try:
        os.killpg(record.pid, signal.SIGTERM)
        deadline = time.monotonic() + LEFTOVER_GRACE
        while group_members(record.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if group_members(record.pid):
            os.killpg(record.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return True


def _remove_temp_dir(record: PidFile, folder: Path) -> None:
    """The left-over server's temporary folder, only where the plugin makes one: a folder of
    its own beside the log (a pid file naming any other place removes nothing)."""
    if not record.temp_dir:
        return
    temp = Path(record.temp_dir)
    if temp.parent.resolve() == folder.resolve() and temp.is_dir() and not temp.is_symlink():
        shutil.rmtree(temp, ignore_errors=True)


# -- ports -----------------------------------------------------------------------------------


def port_in_use(port: int) -> bool:
    """Whether something already listens on ``127.0.0.1:port`` (or on every address)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is no owner
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port`` (any address), from ``/proc/net``."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            rows = (_PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if (
                len(fields) > 9
                and fields[3] == "0A"
                and int(fields[1].rpartition(":")[2], 16) == port
            ):
                inodes.add(fields[9])
    return inodes


def port_held_by_group(port: int, group: int) -> bool | None:
    """Whether the socket listening on ``port`` belongs to a process of ``group``; ``None``
    when the system does not say (no ``/proc``, or no permission to look)."""
    inodes = listening_inodes(port)
    if not inodes:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for pid in group_members(group):
        try:
            fds = list((_PROC / str(pid) / "fd").iterdir())
        except OSError:
            return None
        for fd in fds:
            try:
                if os.readlink(fd) in wanted:
                    return True
            except OSError:  # closed meanwhile
                continue
    return False
