"""On-disk response cache, content-addressed by everything that determines a response.

Each entry is one JSON file written atomically (temporary file, then rename), so a run killed at
any moment, even by ``kill -9``, leaves only complete entries, and a rerun resumes from them.
A file that cannot be read, or holds something other than a response record, is a miss: the
request is sent again and the file rewritten, with one warning per file. Records are read
bounded (:data:`MAX_RECORD_BYTES`), and only from regular files: a symlink to ``/dev/zero``, a
FIFO or a directory in a record's place is a miss too.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

from pytest_bfcl.files import WritePlace, content_key, read_regular_file
from pytest_bfcl.models.cache_journal import note_written


def cache_key(data: Any) -> str:
    """sha256 of the canonical JSON of what determines the response. A request holding lone
    surrogates (a model's answer fed back in a conversation) has no UTF-8 form: its key is
    taken from the ASCII JSON instead (other keys stay as they were)."""
    try:
        return content_key(data)
    except UnicodeEncodeError:
        text = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("ascii")).hexdigest()


# The largest record read back: one made from an answer at the largest --bfcl-max-response-bytes
# worth keeping, written as ASCII JSON (a non-ASCII character can take 12 bytes as escapes).
MAX_RECORD_BYTES = 12 * 8 * 2**20 + 2**16

# What a record must hold to be used: the model's output and its measurements, of these types.
_RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "result": (str, list),
    "tool_call_ids": (list,),
    "latency": (int, float, type(None)),
    "input_tokens": (int, type(None)),
    "output_tokens": (int, type(None)),
    "reasoning": (str, type(None)),
    "finish_reason": (str, type(None)),
}


# Finish reasons of answers that were no answer (a gateway's ``"error"``, a Responses
# answer's ``failed``/``cancelled``/unfinished status), which older versions stored.
FAILURE_FINISHES = frozenset({"error", "failed", "cancelled", "in_progress", "queued"})


class CacheWarning(UserWarning):
    """A cache file was unusable and is being replaced."""


def record_problem(record: Any) -> str | None:
    """Why a stored value is not a usable response record, or None when it is one."""
    if not isinstance(record, dict):
        return f"it holds a {type(record).__name__}, not a response record"
    if "result" not in record:
        return "it has no 'result'"
    for name, types in _RECORD_FIELDS.items():
        value = record.get(name)
        if name in record and (not isinstance(value, types) or isinstance(value, bool)):
            return f"its {name!r} is a {type(value).__name__}"
    result = record["result"]
    if isinstance(result, list) and not all(
        isinstance(call, dict) and len(call) == 1 and isinstance(next(iter(call)), str)
        for call in result
    ):
        return "its 'result' is not what a server answers (text, or calls as {name: arguments})"
    finish = record.get("finish_reason")
    if finish in FAILURE_FINISHES:  # stored before these were told apart
        return f"it is a server's failure (finish_reason {finish!r}), not an answer"
    ids = record.get("tool_call_ids", [])
    if not all(isinstance(i, str) for i in ids):
        return "its 'tool_call_ids' are not all text"
    return None


def _write_atomic(path: Path, record: dict[str, Any]) -> None:
    # ASCII JSON: an answer may hold lone surrogates ("\ud800"), which UTF-8 cannot encode
    # but JSON escapes write and read back exactly.
    text = json.dumps(record, ensure_ascii=True) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make the files unreadable to others
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ResponseCache:
    def __init__(
        self, directory: Path, refresh: bool = False, max_bytes: int = MAX_RECORD_BYTES
    ) -> None:
        self.directory = directory
        self.max_bytes = max_bytes  # records larger than this are a miss
        self.refresh = refresh  # ignore what is stored, overwrite with new responses
        self.unusable: set[Path] = set()  # files warned about (once each)
        self.place = WritePlace("response cache")
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        if self.refresh:
            return None
        path = self._path(key)
        try:
            # bounded, and a regular file only: a FIFO would block, /dev/zero never ends
            record = json.loads(read_regular_file(path, self.max_bytes).decode("utf-8"))
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._unusable(path, f"it cannot be read ({exc.strerror or exc})")
            return None
        except (ValueError, RecursionError) as exc:
            self._unusable(path, f"it cannot be read ({type(exc).__name__}: {str(exc)[:200]})")
            return None
        problem = record_problem(record)
        if problem is not None:
            self._unusable(path, problem)
            return None
        return record  # type: ignore[no-any-return]

    def _unusable(self, path: Path, why: str) -> None:
        with self._lock:
            if path in self.unusable:
                return
            self.unusable.add(path)
        warnings.warn(
            f"pytest-bfcl: ignoring the cached response {path}: {why}; the request is sent "
            "again and the file replaced",
            CacheWarning,
            stacklevel=2,
        )

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store a record; a full or read-only disk stops the cache's writes with one warning
        (the answers are still scored, a rerun asks again)."""
        if self.place.stopped:
            return
        path = self._path(key)
        try:
            _write_atomic(path, record)
        except IsADirectoryError:  # this record's place only (warned when it was read)
            return
        except OSError as exc:
            self.place.failed(path, exc)
        else:
            note_written(path)  # a conversation ended by its budget drops its records
