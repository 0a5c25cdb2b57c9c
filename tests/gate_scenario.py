"""The regression-gate scenario shared by the gate and CI-report tests: a baseline of
simple_python in which entries 0..19 fail, and a runner for later results."""

from __future__ import annotations

from pathlib import Path

import pytest
from result_files import write_oracle_results

WRONG = "I would rather not call anything."  # a text answer: fails every AST entry


def write_results(root: Path, dataset, wrong_ids: set[str]) -> Path:
    """Replay results for simple_python: oracle answers, except text for ``wrong_ids``."""
    spoil = dict.fromkeys(wrong_ids, WRONG)
    write_oracle_results(root, dataset, "simple_python", spoil, latency=1.0)
    return root


def ids(numbers) -> set[str]:
    return {f"simple_python_{n}" for n in numbers}


@pytest.fixture
def gate_env(pytester, dataset, data_source, tmp_path):
    """Records a baseline in which entries 0..19 fail; returns a runner for later results."""
    base_results = write_results(tmp_path / "base", dataset, ids(range(20)))
    baseline = tmp_path / "baseline.json"
    common = [
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-category=simple_python",
        "-p",
        "no:cacheprovider",
    ]
    first = pytester.runpytest(
        f"--bfcl-model=replay:{base_results}", f"--bfcl-save-baseline={baseline}", *common
    )
    first.assert_outcomes(passed=380, failed=20)

    def run(wrong: set[str], *extra: str, name: str = "now"):
        results = write_results(tmp_path / name, dataset, wrong)
        return pytester.runpytest(
            f"--bfcl-model=replay:{results}", f"--bfcl-baseline={baseline}", *common, *extra
        )

    return run, baseline
