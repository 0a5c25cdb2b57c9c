"""Agreement with the reference evaluator's verdicts on the shared corpora.

Every single-turn and relevance entry of ``reference/corpus`` (function-calling outputs, two
variants) and ``reference/corpus2/p0`` (prompting outputs) is replayed through our decoders and
checkers; verdict and error type must equal the reference's. Skips where the corpora are absent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_bfcl.check.single_turn import ScoringOptions
from pytest_bfcl.dataset.categories import SINGLE_TURN
from pytest_bfcl.models.base import Generation
from pytest_bfcl.run.engine import BfclRun, Skip, make_model
from pytest_bfcl.settings import Settings


def _verdicts(path: Path, key_fields: tuple[str, ...]) -> dict[tuple, dict]:
    out = {}
    with path.open() as fh:
        for line in fh:
            record = json.loads(line)
            out[tuple(record[f] for f in key_fields)] = record
    return out


def _replay_disagreements(
    dataset, result_dir: Path, mode: str, reference: dict
) -> tuple[int, list]:
    settings = Settings(model=f"replay:{result_dir}", mode=mode, categories=list(SINGLE_TURN))
    run = BfclRun(settings, dataset, make_model(settings.model, ScoringOptions(mode, mode == "fc")))
    checked, disagreements = 0, []
    for category in SINGLE_TURN:
        for entry in dataset.entries(category):
            generation = run.generate(entry.id)
            if isinstance(generation, Skip):
                continue
            assert isinstance(generation, Generation)
            verdict = run.score(generation)
            ref = reference(entry.id)
            checked += 1
            same = verdict.valid == ref["ref_pass"] and (
                verdict.valid or verdict.error_type == ref["ref_error_type"]
            )
            if not same:
                disagreements.append(
                    (entry.id, ref["kind"], ref["ref_error_type"], verdict.error_type)
                )
    return checked, disagreements


@pytest.mark.parametrize("variant", [0, 1])
def test_function_calling_corpus_agrees(dataset, reference_dir, variant):
    verdicts = _verdicts(reference_dir / "corpus" / "verdicts.jsonl", ("variant", "id"))
    result_dir = reference_dir / "corpus" / f"v{variant}"
    checked, disagreements = _replay_disagreements(
        dataset, result_dir, "fc", lambda entry_id: verdicts[(variant, entry_id)]
    )
    assert checked == 3641
    assert disagreements == []


def test_prompting_corpus_agrees(dataset, reference_dir):
    verdicts = _verdicts(reference_dir / "corpus2" / "verdicts2.jsonl", ("set", "variant", "id"))
    result_dir = reference_dir / "corpus2" / "p0"
    checked, disagreements = _replay_disagreements(
        dataset, result_dir, "prompt", lambda entry_id: verdicts[("p", 0, entry_id)]
    )
    assert checked > 3000
    kinds = Counter(k for _, k, _, _ in disagreements)
    assert disagreements == [], kinds
