"""Recordings of web traffic: every search answer and fetched page of a live run, one JSON file
each, so a later run replays them exactly and offline.

Layout: ``<dir>/search/<key>.json`` and ``<dir>/fetch/<key>.json``, where the key is a hash of
the request; each file also holds the request itself, so a cassette can be read and edited by
hand. Failures are recorded too (a replay shows the model the same error). Files are written
atomically, so concurrent workers can record into one cassette.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pytest_bfcl.backends.base import ToolUnavailable


class CassetteMiss(ToolUnavailable):
    """A replayed run asked for something the cassette does not hold."""


def request_key(request: dict[str, Any]) -> str:
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


class Cassette:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _path(self, kind: str, request: dict[str, Any]) -> Path:
        return self.directory / kind / f"{request_key(request)}.json"

    def load(self, kind: str, request: dict[str, Any]) -> dict[str, Any]:
        path = self._path(kind, request)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            what = (
                f"query {request.get('keywords')!r} (region {request.get('region')!r}, "
                f"{request.get('count')} results)"
                if kind == "search"
                else f"URL {request.get('url')!r}"
            )
            raise CassetteMiss(
                f"the web cassette {self.directory} has no recording of the {kind} {what}; "
                "record it with --bfcl-web=record"
            ) from None
        except (OSError, json.JSONDecodeError) as exc:
            raise CassetteMiss(f"cannot read the web recording {path}: {exc}") from None
        if record.get("request") != request:
            raise CassetteMiss(f"{path} records another request: {record.get('request')!r}")
        return dict(record["response"])

    def save(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        path = self._path(kind, request)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(
                    {"request": request, "response": response}, fh, ensure_ascii=False, indent=1
                )
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def count(self, kind: str) -> int:
        return len(list((self.directory / kind).glob("*.json")))
