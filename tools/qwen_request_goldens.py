"""Keep the release's first requests of a request comparison's ``simple_python`` slice as
goldens for ``tests/handlers/test_qwen_tokens.py``: entry, model, window, ``max_tokens`` and the
prompt's sha256 (the prompt itself is what pytest-bfcl renders; the test checks it is the same).

    python -m pytest_bfcl.conformance requests --leaderboard-model Qwen/Qwen3-8B-FC \\
        --tokenizer ./qwen3-8b --categories simple_python --keep runs/fc-40960
    python tools/qwen_request_goldens.py tests/data/handlers/qwen_requests.json \\
        Qwen/Qwen3-8B-FC=runs/fc-40960@40960 Qwen/Qwen3-8B=runs/prompt-4096@4096 ...

Each kept run is given as ``MODEL=DIR@CONTEXT``: the model it followed and the window of the
tokenizer folder it ran with (``max_position_embeddings`` of its config.json).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

CATEGORY = "simple_python"


def _entry_ids(run: Path) -> list[str]:
    return list(json.loads((run / "ours" / CATEGORY / "slice.json").read_text()))


def goldens_of(model: str, run: Path, context: int, questions: dict[str, str]) -> list[dict]:
    """The official side's requests, each matched to its entry by the question it asks."""
    lines = (run / "official" / CATEGORY / "requests.jsonl").read_text().splitlines()
    found = []
    for body in map(json.loads, lines):
        prompt = body["prompt"]
        ids = [i for i in _entry_ids(run) if questions[i] in prompt]
        if len(ids) != 1:
            raise SystemExit(f"{run}: a request matches {len(ids)} entries of the slice")
        found.append(
            {
                "category": CATEGORY,
                "id": ids[0],
                "model": model,
                "context": context,
                "max_tokens": body["max_tokens"],
                "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(),
            }
        )
    return found


def main(argv: list[str]) -> int:
    from pytest_bfcl.dataset.fetch import ensure_pinned_data
    from pytest_bfcl.kinds import open_dataset

    out, *runs = argv
    dataset = open_dataset(ensure_pinned_data())
    questions = {e.id: e.question[0][-1].content for e in dataset.entries(CATEGORY)}
    requests = []
    for spec in runs:
        model, rest = spec.split("=", 1)
        run, context = rest.rsplit("@", 1)
        requests += goldens_of(model, Path(run), int(context), questions)
    requests.sort(key=lambda g: (g["model"], g["context"], g["id"]))
    payload = {
        "about": "the pinned release's first requests (bfcl generate --local-model-path with "
        "the tokenizer folder tools/qwen_checkpoint.py rebuilds), written by "
        "tools/qwen_request_goldens.py",
        "requests": requests,
    }
    Path(out).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(requests)} requests to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
