"""Result directories in the leaderboard's layout for the tests: the oracle's answers, with
some entries answered otherwise or left out."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_bfcl.dataset.layout import ResultLayout
from pytest_bfcl.models.base import Task
from pytest_bfcl.models.oracle import OracleModel
from pytest_bfcl.scoring import ScoringOptions


def write_oracle_results(
    root: Path,
    dataset,
    category: str,
    spoil: dict[str, object] | None = None,
    drop=(),
    latency: float | None = None,
) -> Path:
    """Write ``category``'s result file under ``root`` (a model's result root): the oracle's fc
    answer for every entry, except ``spoil[id]`` where given and nothing for ``drop``. Returns
    the file."""
    oracle = OracleModel(ScoringOptions("fc", True))
    answers = dataset.answers(category)
    path = ResultLayout(root).category_file(category)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for entry in dataset.entries(category):
            if entry.id in drop:
                continue
            if spoil is not None and entry.id in spoil:
                result = spoil[entry.id]
            else:
                result = oracle.generate(Task(entry, answers.get(entry.id))).result
            record = {"id": entry.id, "result": result}
            if latency is not None:
                record["latency"] = latency
            fh.write(json.dumps(record) + "\n")
    return path
