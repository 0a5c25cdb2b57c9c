"""On-disk response cache, content-addressed by everything that determines a response.

Each entry is one JSON file written atomically (temporary file, then rename), so a run killed at
any moment, even by ``kill -9``, leaves only complete entries, and a rerun resumes from them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_key(identity: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of what determines the response."""
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, directory: Path, refresh: bool = False) -> None:
        self.directory = directory
        self.refresh = refresh  # ignore what is stored, overwrite with new responses
        self.hits = 0
        self.writes = 0

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        if self.refresh:
            return None
        path = self._path(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError):
            return None  # unreadable: treated as absent and rewritten
        self.hits += 1
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.writes += 1
