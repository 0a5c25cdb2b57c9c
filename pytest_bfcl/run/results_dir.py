"""Writing generations in the reference's result layout (``--bfcl-results-dir``), so the
reference's evaluator can score our generations and ``replay:`` can score them again.

``DIR/<model>/<group>/BFCL_v4_<category>_result.json``, JSON Lines of ``{"id", "result",
"latency", "input_token_count", "output_token_count", ...}``. Several processes (xdist
workers) append to the same files under an exclusive lock; at the end of the session each file
is rewritten in the dataset's order, keeping the last record of an id.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.categories import category_of_id, sort_key
from pytest_bfcl.dataset.layout import ResultLayout, model_dir_name
from pytest_bfcl.models.base import Generation


def sample_dir(root: Path, sample: int, samples: int) -> Path:
    """Where one sample's result set goes: the directory itself with one sample,
    ``sample-<k>`` (from 1) inside it with several."""
    return root if samples == 1 else root / f"sample-{sample + 1}"


def result_record(generation: Generation) -> dict[str, Any]:
    record: dict[str, Any] = {"id": generation.id, "result": generation.result}
    details = generation.details or {}
    if details:  # multi-step: per-turn, per-step measurements and the inference log
        record["latency"] = details.get("latency")
        record["input_token_count"] = details.get("input_token_count")
        record["output_token_count"] = details.get("output_token_count")
        record["inference_log"] = details.get("inference_log")
    else:
        record["latency"] = generation.latency
        record["input_token_count"] = generation.input_tokens
        record["output_token_count"] = generation.output_tokens
    # The reference's field: per turn, per step for a conversation, one text otherwise; only
    # when there was any reasoning.
    if details.get("reasoning_content"):
        record["reasoning_content"] = details["reasoning_content"]
    elif generation.reasoning:
        record["reasoning_content"] = generation.reasoning
    return record


class ResultsWriter:
    def __init__(self, directory: Path, model: str) -> None:
        self.root = directory / model_dir_name(model)
        self.layout = ResultLayout(self.root)

    def path_for(self, category: str) -> Path:
        return self.layout.category_file(category)

    def write(self, generation: Generation, path: Path | None = None) -> None:
        """Append one generation (safe across processes), to its category's file or ``path``."""
        path = path or self.path_for(category_of_id(generation.id))
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(result_record(generation), ensure_ascii=False, default=str) + "\n"
        with path.open("a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.write(line)
                fh.flush()
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def finalize(self) -> list[Path]:
        """Rewrite every result file sorted in dataset order, one record per id."""
        written = []
        for path in sorted(self.root.rglob("BFCL_v4_*_result.json")):
            records: dict[str, str] = {}
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        records[json.loads(line)["id"]] = (
                            line if line.endswith("\n") else line + "\n"
                        )
            ordered = sorted(records, key=sort_key)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text("".join(records[i] for i in ordered), encoding="utf-8")
            os.replace(tmp, path)
            written.append(path)
        return written
