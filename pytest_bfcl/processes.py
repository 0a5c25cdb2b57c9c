"""What the system says about a process, read through psutil (Linux, macOS and the BSDs alike,
with no ``/proc`` of the plugin's own): whether it runs, when it started, its command line, its
user, its process group and session, the ports it listens on, whether it is stopped.

Every question answers ``None`` where the system does not say (no such process, no permission,
no such notion on this system): callers never act on a guess. What a whole system cannot do is
said once a run, in one line (:func:`say_unsupported`).
"""

from __future__ import annotations

import os
import sys
import threading

import psutil

# psutil's own errors, and what a pid out of every range raises on the way to the system.
_NO_ANSWER = (psutil.Error, OSError, ValueError, OverflowError, TypeError)
_said: set[str] = set()
_said_lock = threading.Lock()


def say_unsupported(what: str) -> None:
    """One line on stderr, once a process, for a check this system cannot make."""
    with _said_lock:
        if what in _said:
            return
        _said.add(what)
    sys.stderr.write(f"pytest-bfcl: {what}\n")
    sys.stderr.flush()


def _process(pid: int) -> psutil.Process | None:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        return psutil.Process(pid)
    except _NO_ANSWER:
        return None


def process_start(pid: int) -> float | None:
    """When ``pid`` started (seconds since the epoch), or ``None``."""
    process = _process(pid)
    try:
        return process.create_time() if process is not None else None
    except _NO_ANSWER:
        return None


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie, which has exited, is not)."""
    process = _process(pid)
    try:
        return process is not None and process.status() != psutil.STATUS_ZOMBIE
    except _NO_ANSWER:
        return False


def command_line(pid: int) -> list[str] | None:
    """The arguments ``pid`` was started with (as the system shows them), or ``None``."""
    process = _process(pid)
    try:
        return list(process.cmdline()) if process is not None else None
    except _NO_ANSWER:
        return None


def process_user(pid: int) -> int | None:
    """The real user id ``pid`` runs as, or ``None`` (also where users have no number)."""
    process = _process(pid)
    try:
        return int(process.uids().real) if process is not None else None
    except (*_NO_ANSWER, AttributeError):
        return None


def process_group(pid: int) -> int | None:
    """``pid``'s process group, or ``None`` (no such process; no process groups here)."""
    if _process(pid) is None or not hasattr(os, "getpgid"):
        return None
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def process_session(pid: int) -> int | None:
    """``pid``'s session, or ``None``."""
    if _process(pid) is None or not hasattr(os, "getsid"):
        return None
    try:
        return os.getsid(pid)
    except OSError:
        return None


def own_lineage() -> set[int]:
    """This process and every process above it (its parent, the shell, ... up to the first)."""
    lineage = {os.getpid()}
    try:
        lineage.update(parent.pid for parent in psutil.Process().parents())
    except _NO_ANSWER:
        lineage.add(os.getppid())
    return lineage


def group_members(group: int) -> list[int]:
    """The running processes whose process group is ``group`` (none for a group that is not a
    positive number)."""
    if not isinstance(group, int) or group <= 0 or not hasattr(os, "getpgid"):
        return []
    members = []
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) == group and process_alive(pid):
                members.append(pid)
        except OSError:  # gone meanwhile
            continue
    return members


def listens_on(pid: int, port: int) -> bool | None:
    """Whether ``pid`` holds a socket listening on TCP ``port``; ``None`` when the system does
    not say (no permission to look at its sockets)."""
    process = _process(pid)
    if process is None:
        return False
    try:
        connections = process.net_connections(kind="tcp")
    except psutil.NoSuchProcess:
        return False
    except _NO_ANSWER:
        return None
    return any(
        conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port
        for conn in connections
    )


def is_stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped (SIGSTOP, a terminal's job control, a tracer)."""
    process = _process(pid)
    try:
        status = process.status() if process is not None else None
    except _NO_ANSWER:
        return False
    return status in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
