"""Recordings of web traffic: every search answer and fetched page of a live run, one JSON file
each, so a later run replays them exactly and offline.

Layout: ``<dir>/search/<key>.json`` and ``<dir>/fetch/<key>.json``, where the key is a hash of
the request; each file also holds the request itself, so a cassette can be read and edited by
hand. Failures are recorded too (a replay shows the model the same error). Files are written
atomically, so concurrent workers can record into one cassette.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_bfcl.errors import ToolUnavailable
from pytest_bfcl.files import content_key, read_problem, read_small_text, write_json_atomic

RECORDING_MAX = 64 << 20  # bytes of one recorded search or page (a fetch keeps far less)


class CassetteMiss(ToolUnavailable):
    """A replayed run asked for something the cassette does not hold."""


class Cassette:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _path(self, kind: str, request: dict[str, Any]) -> Path:
        return self.directory / kind / f"{content_key(request)}.json"

    def load(self, kind: str, request: dict[str, Any]) -> dict[str, Any]:
        path = self._path(kind, request)
        try:
            record = json.loads(read_small_text(path, RECORDING_MAX))
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
        except (OSError, ValueError) as exc:
            why = read_problem(exc) if isinstance(exc, OSError | UnicodeDecodeError) else exc
            raise CassetteMiss(f"cannot read the web recording {path}: {why}") from None
        if not isinstance(record, dict) or not isinstance(record.get("response"), dict):
            raise CassetteMiss(f"{path} is not a web recording (no request and response)")
        if record.get("request") != request:
            raise CassetteMiss(f"{path} records another request: {record.get('request')!r}")
        return dict(record["response"])

    def save(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        write_json_atomic(self._path(kind, request), {"request": request, "response": response}, 1)

    def count(self, kind: str) -> int:
        return len(list((self.directory / kind).glob("*.json")))
