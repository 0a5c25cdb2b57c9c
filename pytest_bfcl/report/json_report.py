"""The machine-readable score report (``--bfcl-report PATH``)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pytest_bfcl.scores.models import Scores


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
