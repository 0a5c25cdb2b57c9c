"""On-disk response cache, content-addressed by everything that determines a response.

Each entry is one JSON file written atomically (temporary file, then rename), so a run killed at
any moment, even by ``kill -9``, leaves only complete entries, and a rerun resumes from them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_bfcl.files import content_key, write_json_atomic

# sha256 of the canonical JSON of what determines the response
cache_key = content_key


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
        write_json_atomic(self._path(key), record, indent=None)
        self.writes += 1
