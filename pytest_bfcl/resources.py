"""Files the project ships in ``data/`` (copied into the wheel as ``pytest_bfcl/data/``)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent


def project_data_file(name: str) -> Path:
    """Path of a shipped data file: inside an installed wheel, or in the source tree."""
    candidates = [_PACKAGE / "data" / name, _PACKAGE.parent / "data" / name]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"pytest-bfcl data file {name} is missing (looked in {', '.join(map(str, candidates))})"
    )


@cache
def project_json(name: str) -> Any:
    return json.loads(project_data_file(name).read_text(encoding="utf-8"))
