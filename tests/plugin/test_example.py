"""The model-repo example runs as documented, so it cannot rot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "model-repo"


@pytest.fixture
def example(pytester, data_source):  # data_source: the pinned release is in the cache
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True)
    return pytester


def test_pull_request_invocation_passes_the_gate(example):
    result = example.runpytest("--bfcl-sample=0.1", "--bfcl-seed=0")
    assert result.ret == 0, result.stdout.str()[-2000:]
    out = result.stdout.str()
    assert "BFCL gate: passed" in out
    assert "model checkpoint: local working tree" in out
    report = json.loads((example.path / "reports" / "bfcl-report.json").read_text())
    assert report["metadata"]["sample"] == 0.1
    assert report["gate"]["comparisons"] and not any(
        c["failed"] for c in report["gate"]["comparisons"]
    )
    assert (example.path / "reports" / "junit.xml").is_file()
    assert (example.path / "reports" / "csv" / "data_overall.csv").is_file()


def test_committed_baseline_matches_the_pinned_release(example):
    baseline = json.loads((example.path / "baseline" / "bfcl-baseline.json").read_text())
    assert baseline["metadata"]["dataset"]["version"] == "2026.3.23"
    assert baseline["metadata"]["dataset"]["data_dir"] is None
    assert len(baseline["verdicts"]) == 3641
