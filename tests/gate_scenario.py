"""The regression-gate scenario shared by the gate and CI-report tests (the ``gate_env``
fixture of tests/conftest.py): a baseline of simple_python in which entries 0..19 fail, and
results written for later runs."""

from __future__ import annotations

from pathlib import Path

from pytest_bfcl.testing.result_files import write_oracle_results

WRONG = "I would rather not call anything."  # a text answer: fails every AST entry


def write_results(root: Path, dataset, wrong_ids: set[str]) -> Path:
    """Replay results for simple_python: oracle answers, except text for ``wrong_ids``."""
    spoil = dict.fromkeys(wrong_ids, WRONG)
    write_oracle_results(root, dataset, "simple_python", spoil, latency=1.0)
    return root


def ids(numbers) -> set[str]:
    return {f"simple_python_{n}" for n in numbers}
