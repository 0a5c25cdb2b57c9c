"""The processes of servers the plugin starts, known beyond the session that started them:
a pid file beside each server's log, so that a server a killed session left running (SIGKILL,
an out-of-memory kill) is found and stopped by the next run in that folder; and whether a port
is free, or held by the server the plugin started.

A pid file is a claim, not a proof: it may be stale, edited, or committed to a repository by
someone else. A process is stopped only when it is surely the one the plugin started: a pid
that is positive and none of the run's own (its process, group, session or any process above
it, nor the first process), alive, run by this user, the leader of its process group, started
when the file says, with the command line the file records (as a salted digest: no argument
is kept in clear), and the session that started it gone (a run in progress next door keeps its
server). A folder is removed only when such a server was stopped, and only when it is the one
the plugin made for it: in the log folder, named as the plugin names them, its real path (no
``..``, no symbolic link) the one recorded, still holding the marker written into it.
Everything else is said in one line and left as it is. Process facts come from
:mod:`pytest_bfcl.processes` (psutil); where the system does not give them, no pid file is
written and nothing is stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_bfcl.files import (
    NotARegularFile,
    read_problem,
    read_small_text,
    write_text_atomic,
)
from pytest_bfcl.processes import (
    command_line,
    group_members,
    listens_on,
    own_lineage,
    process_alive,
    process_group,
    process_session,
    process_start,
    process_user,
    say_unsupported,
)

PID_MARK = "pytest-bfcl started server"
PID_SUFFIX = ".pid"
PID_FILE_MAX = 16 << 10  # bytes: a pid file the plugin writes is a few hundred
LEFTOVER_GRACE = 10.0  # seconds a left-over server gets to exit before it is killed
START_TOLERANCE = 1.0  # seconds: a start time as two runs see it (the boot time is whole seconds)
TEMP_PREFIX = "vllm-tmp-"
TEMP_MARKER = ".pytest-bfcl-temp"  # written into a temporary folder the plugin made
_TEMP_NAME = re.compile(r"vllm-tmp-\d{1,5}")
_SHOWN_LIMIT = 200  # characters of a pid file's text field shown in a note
PID_MAX = 1 << 22  # the largest pid any supported system gives (Linux's pid_max ceiling)


class PidFile(BaseModel):
    """What the pid file beside a server's log says (every field checked: it is read back from
    a folder others can write to)."""

    model_config = ConfigDict(strict=True)

    kind: str = Field(max_length=64)
    name: str = Field(max_length=100)
    pid: int  # the server's process, leader of its own process group
    start: float = Field(allow_inf_nan=False)  # its start time (seconds since the epoch)
    command: str = Field(pattern=r"^[0-9a-f]{64}$")  # salted sha256 of its command line
    salt: str = Field(pattern=r"^[0-9a-f]{32}$")
    owner: int  # the process of the session that started it
    owner_start: float = Field(allow_inf_nan=False)
    log: str = Field(max_length=4096)
    temp_dir: str | None = Field(default=None, max_length=4096)
    temp_token: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$")


def pid_file(log_path: Path) -> Path:
    return log_path.with_name(log_path.name + PID_SUFFIX)


def shown(text: str, limit: int = _SHOWN_LIMIT) -> str:
    """A text field of a pid file as a note shows it: control, bidi and unpaired characters
    escaped, at most :data:`_SHOWN_LIMIT` characters (a file is data, never terminal codes)."""
    escaped = "".join(
        ch if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF else ascii(ch)[1:-1]
        for ch in text[:limit]
    )
    return escaped + ("..." if len(text) > limit else "")


def command_digest(arguments: list[str], salt: str) -> str:
    """The digest a pid file keeps of a command line: the arguments may hold a key."""
    joined = "\0".join(arguments).encode("utf-8", "surrogatepass")
    return hashlib.sha256(bytes.fromhex(salt) + joined).hexdigest()


# -- temporary folders -----------------------------------------------------------------------


def make_temp_dir(path: Path) -> str:
    """Make a server's temporary folder at ``path`` with a marker holding a fresh token (the
    token, which the pid file records). A folder already there is reused only when it holds a
    marker (one the plugin made, left by a killed run): anything else there is not the plugin's
    to fill or to remove later, and is refused."""
    token = secrets.token_hex(16)
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode) or _marker(path) is None:
            raise FileExistsError(
                f"{path} is already there and is not a temporary folder the plugin made; "
                "remove it or choose another log folder"
            ) from None
    write_text_atomic(path / TEMP_MARKER, token)
    return token


def _marker(folder: Path) -> str | None:
    try:
        return read_small_text(folder / TEMP_MARKER, 64, follow_symlinks=False).strip()
    except (OSError, ValueError):
        return None


def remove_own_temp_dir(path: Path, token: str | None) -> str | None:
    """Remove ``path`` when it is still the folder the plugin made (a real folder, not reached
    through a symbolic link, holding the marker with ``token``); why not, otherwise."""
    try:
        info = os.lstat(path)
    except OSError:
        return None  # already gone
    if not stat.S_ISDIR(info.st_mode):
        return "it is no longer a folder"
    if token is None or _marker(path) != token:
        return "it no longer holds the marker the plugin wrote into it"
    shutil.rmtree(path, ignore_errors=True)  # never follows a link inside it
    return None


def _recorded_temp_dir(record: PidFile, folder: Path) -> tuple[Path | None, str | None]:
    """The left-over server's temporary folder, when the record names one the plugin makes:
    its real path, directly inside the log folder, with the plugin's name for it."""
    if not record.temp_dir:
        return None, None
    raw = record.temp_dir
    temp = Path(raw)
    if "\0" in raw or not temp.is_absolute() or ".." in temp.parts:
        return None, f"the pid file's temporary folder '{shown(raw)}' is not a plain full path"
    if not _TEMP_NAME.fullmatch(temp.name):
        return None, f"'{shown(raw)}' is not named as the plugin names its temporary folders"
    if os.path.realpath(temp) != raw or Path(raw).parent != Path(os.path.realpath(folder)):
        where = shown(str(folder), 1000)
        return None, f"'{shown(raw)}' is not a folder of its own in the log folder {where}"
    return temp, None


# -- writing ---------------------------------------------------------------------------------


def write_pid_file(
    log_path: Path, name: str, pid: int, temp_dir: Path | None, temp_token: str | None = None
) -> None:
    """Record a started server beside its log (nothing where the system gives no start
    times or command lines: the next run could not tell it from another process)."""
    start, owner_start = process_start(pid), process_start(os.getpid())
    arguments = command_line(pid)
    if start is None or owner_start is None or arguments is None:
        say_unsupported(
            "this system does not give the start time and command line of a process: no pid "
            "file is written, and a server a killed run leaves running is not stopped by the next"
        )
        return
    salt = secrets.token_hex(16)
    record = PidFile(
        kind=PID_MARK,
        name=name,
        pid=pid,
        start=start,
        command=command_digest(arguments, salt),
        salt=salt,
        owner=os.getpid(),
        owner_start=owner_start,
        log=str(log_path.absolute()),
        temp_dir=os.path.realpath(temp_dir) if temp_dir is not None else None,
        temp_token=temp_token,
    )
    path = pid_file(log_path)
    try:
        write_text_atomic(path, record.model_dump_json())
    except OSError as exc:
        say_unsupported(f"no pid file written at {path}: {read_problem(exc)}")


def remove_pid_file(log_path: Path) -> None:
    _unlink_regular(pid_file(log_path))


def _unlink_regular(path: Path) -> None:
    """Remove ``path`` when it is a regular file (a link or a device there is not the
    plugin's)."""
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            path.unlink()
    except OSError:
        pass


# -- reading and judging ---------------------------------------------------------------------


class NotOurs(Exception):
    """A ``.pid`` file of another program: passed over in silence."""


class Refused(Exception):
    """A pid file that claims to be the plugin's but cannot be trusted; the message says why."""


def read_pid_file(path: Path) -> PidFile:
    """The pid file at ``path``, checked field by field; :class:`NotOurs` for another
    program's file, :class:`Refused` (why, in words) for one that cannot be trusted."""
    try:
        text = read_small_text(path, PID_FILE_MAX, follow_symlinks=False)
    except (OSError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise NotOurs from None
        raise Refused(read_problem(exc)) from None
    try:
        data = json.loads(text)
    except ValueError:
        raise NotOurs from None
    if not isinstance(data, dict) or data.get("kind") != PID_MARK:
        raise NotOurs
    try:
        record = PidFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "its content"
        raise Refused(f"its {shown(where)} is not valid ({shown(error['msg'])})") from None
    _refuse_foreign_pids(record, path)
    return record


def _refuse_foreign_pids(record: PidFile, path: Path) -> None:
    """Pids no server the plugin starts can have: not positive, the first process, or the
    run's own (its process, group, session, or any process above it)."""
    for field, value in (("pid", record.pid), ("owner", record.owner)):
        if value <= 1 or value > PID_MAX:
            raise Refused(f"its {field} {value} is no server's the plugin starts")
    own = own_lineage() | {os.getpgrp(), os.getsid(0)}
    if record.pid in own:
        raise Refused(f"its pid {record.pid} is this run's own process, group or session")
    if Path(record.log).name + PID_SUFFIX != path.name:
        raise Refused(f"it records the log '{shown(record.log)}', not the one beside it")


def _stoppable(record: PidFile) -> str | None:
    """Why the recorded process must not be stopped (``None``: it is surely the server the
    plugin started, still running)."""
    if process_user(record.pid) not in (None, os.getuid()):
        return f"pid {record.pid} runs as another user"
    if process_group(record.pid) != record.pid or process_session(record.pid) != record.pid:
        return f"pid {record.pid} does not lead a process group and session of its own"
    arguments = command_line(record.pid)
    if arguments is None or command_digest(arguments, record.salt) != record.command:
        return f"pid {record.pid} runs another command than the one the pid file records"
    return None


def _same_start(pid: int, start: float) -> bool:
    now = process_start(pid)
    return now is not None and abs(now - start) <= START_TOLERANCE


def stop_left_behind(folder: Path) -> list[str]:
    """Stop the servers that earlier sessions started in ``folder`` and left running (their
    session is gone), remove their temporary folders and pid files; one line for each
    stopped, and one for each pid file that is not trusted (nothing stopped or removed)."""
    notes = []
    for path in sorted(folder.glob(f"*{PID_SUFFIX}")) if folder.is_dir() else []:
        note = _settle(path, folder)
        if note:
            notes.append(note)
    return notes


def _settle(path: Path, folder: Path) -> str | None:
    """What becomes of one pid file: the one line to say, if any."""
    where = shown(str(path), 1000)
    try:
        record = read_pid_file(path)
    except NotOurs:
        return None
    except Refused as why:
        return f"pytest-bfcl: ignored the pid file {where}: {why}; nothing stopped or removed"
    if _same_start(record.owner, record.owner_start):
        return None  # its session still runs
    if not process_alive(record.pid) or not _same_start(record.pid, record.start):
        _unlink_regular(path)  # its server is gone: a stale record
        return None
    refusal = _stoppable(record)
    if refusal is not None:
        return f"pytest-bfcl: ignored the pid file {where}: {refusal}; nothing stopped or removed"
    if not _stop_group(record.pid):
        return (
            f"pytest-bfcl: could not stop {shown(record.name)} (pid {record.pid}) that an "
            f"earlier run left running; its log: {shown(record.log)}"
        )
    note = (
        f"pytest-bfcl: stopped {shown(record.name)} (pid {record.pid}) that an earlier run "
        f"left running; its log: {shown(record.log)}"
    )
    temp, why_not = _recorded_temp_dir(record, folder)
    if temp is not None:
        why_not = remove_own_temp_dir(temp, record.temp_token)
        why_not = why_not and f"left {shown(str(temp), 1000)} in place: {why_not}"
    _unlink_regular(path)
    return note + (f" ({why_not})" if why_not else "")


def _stop_group(group: int) -> bool:
    """SIGTERM to the server's process group, SIGKILL after :data:`LEFTOVER_GRACE`; whether
    it is gone."""
    try:
        os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + LEFTOVER_GRACE
        while group_members(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        if group_members(group):
            os.killpg(group, signal.SIGKILL)
            time.sleep(0.2)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return not group_members(group)


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


def port_held_by_group(port: int, group: int) -> bool | None:
    """Whether the socket listening on ``port`` belongs to a process of ``group``; ``None``
    when the system does not say (no permission to look at a process's sockets)."""
    unknown = False
    for pid in group_members(group):
        held = listens_on(pid, port)
        if held:
            return True
        unknown = unknown or held is None
    return None if unknown else False


__all__ = [
    "PID_MARK",
    "NotARegularFile",
    "PidFile",
    "make_temp_dir",
    "pid_file",
    "port_held_by_group",
    "port_in_use",
    "read_pid_file",
    "remove_own_temp_dir",
    "remove_pid_file",
    "stop_left_behind",
    "write_pid_file",
]
