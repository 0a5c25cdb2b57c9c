"""The machine-readable score report (``--bfcl-report PATH``)."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_bfcl.report.scores import Scores


def build_report(scores: Scores, metadata: dict[str, Any]) -> dict[str, Any]:
    data = scores.model_dump(mode="json")
    return {
        "metadata": {**metadata, "finished_at": datetime.now(timezone.utc).isoformat()},
        "categories": data["categories"],
        "groups": data["groups"],
        "overall": data["overall"],
        "partial": data["partial"],
        "format_sensitivity": data["format_sensitivity"],
    }


def write_json_atomic(path: Path, payload: dict[str, Any]) -> None:
    """Write via a temporary file and rename, so a killed run never leaves half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make reports unreadable to others
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
