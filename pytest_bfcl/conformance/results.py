"""A result directory in the leaderboard's layout: which model directory, which categories,
which entries, and what each entry's stored output was.

Layout: ``<root>/<model dir>/<group>/BFCL_v4_<category>_result.json`` (JSON Lines of
``{"id", "result", ...}``); memory results sit one level deeper
(``agentic/memory/<backend>/``). Prerequisite conversations (``*_prereq_result.json``) are not
scored by either side and are left out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pytest_bfcl.dataset.categories import ALL
from pytest_bfcl.dataset.layout import GROUP_DIRS as RESULT_GROUP_DIRS
from pytest_bfcl.dataset.layout import RESULT_FILE_GLOB
from pytest_bfcl.files import read_problem, read_small_text

RESULT_FILE_MAX = 512 << 20  # bytes of one stored result file

_CATEGORY_IN_NAME = re.compile(r"BFCL_v4_(\w+?)_result\.json$")
OUTPUT_PREVIEW_CHARS = 200


class ResultsError(ValueError):
    """The directory is not in the leaderboard's result layout."""


class StoredResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    output: str  # the stored ``result``, as JSON text, trimmed for display


def category_of_result_file(path: Path) -> str | None:
    match = _CATEGORY_IN_NAME.search(path.name)
    return match.group(1) if match else None


# The evaluator's group folders directly under a model directory.
# The result layout's group directories, less the executable categories' (the official
# evaluator does not score those).
GROUP_DIRS = frozenset(RESULT_GROUP_DIRS) - {"executable"}


def _holds_result_files(directory: Path) -> bool:
    return any(directory.rglob(RESULT_FILE_GLOB))


def is_model_dir(directory: Path) -> bool:
    return any(
        child.is_dir() and child.name in GROUP_DIRS and _holds_result_files(child)
        for child in directory.iterdir()
    )


def locate_model_dir(results_dir: Path, model_dir_name: str | None = None) -> Path:
    """The model directory: ``results_dir`` itself when it holds group folders, else the one
    model directory under it (``model_dir_name`` chooses among several)."""
    if not results_dir.is_dir():
        raise ResultsError(f"{results_dir} is not a directory")
    if is_model_dir(results_dir):
        return results_dir
    candidates = sorted(
        child for child in results_dir.iterdir() if child.is_dir() and is_model_dir(child)
    )
    chosen = [child for child in candidates if child.name == model_dir_name]
    if chosen:
        return chosen[0]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise ResultsError(
            f"no <model dir>/<group>/BFCL_v4_<category>_result.json files under {results_dir}"
        )
    names = ", ".join(child.name for child in candidates)
    raise ResultsError(
        f"{results_dir} holds several model directories ({names}); pass one of them or "
        "--leaderboard-model"
    )


def result_files(model_dir: Path) -> dict[str, Path]:
    """Category -> result file, prerequisites excluded."""
    files: dict[str, Path] = {}
    for path in sorted(model_dir.rglob(RESULT_FILE_GLOB)):
        category = category_of_result_file(path)
        if category is None or category.endswith("_prereq"):
            continue
        if category in files:
            raise ResultsError(f"two result files for {category}: {files[category]} and {path}")
        files[category] = path
    return files


def _preview(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) <= OUTPUT_PREVIEW_CHARS:
        return text
    return text[: OUTPUT_PREVIEW_CHARS - 1] + "…"


def read_result_file(path: Path) -> list[StoredResult]:
    """The entries of one result file, in file order."""
    out: list[StoredResult] = []
    try:  # a result folder given on the command line: a FIFO or a device is never opened
        text = read_small_text(path, RESULT_FILE_MAX)
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"cannot read {path}: {read_problem(exc)}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise ResultsError(f"{path}:{number}: expected an object with a string id")
        out.append(StoredResult(id=record["id"], output=_preview(record.get("result"))))
    return out


def _category_order(category: str) -> tuple[int, str]:
    return (ALL.index(category) if category in ALL else len(ALL), category)


def read_results(model_dir: Path) -> dict[str, list[StoredResult]]:
    """Category -> stored entries, for every result file of the model directory, in the
    leaderboard's category order."""
    files = result_files(model_dir)
    return {
        category: read_result_file(files[category])
        for category in sorted(files, key=_category_order)
    }
