"""Conformance: score one result directory with the official evaluator and with pytest-bfcl,
then compare the two entry by entry.

``python -m pytest_bfcl.conformance RESULTS_DIR`` runs the whole comparison (see
``docs/conformance.md``). The pieces are importable on their own:

- :mod:`.score_files` reads the evaluator's per-category score files;
- :mod:`.results` locates the model directory and reads the stored outputs;
- :mod:`.junit` reads pytest-bfcl's per-entry verdicts from a junit file;
- :mod:`.compare` pairs the verdicts and renders the agreement;
- :mod:`.reference` builds the evaluator's virtualenv and runs it;
- :mod:`.cli` is the command line (:mod:`.arguments` checks it);
- :mod:`.requests_cli` (``python -m pytest_bfcl.conformance requests``) compares what both
  harnesses send a model: :mod:`.request_runs` runs them against one recording server,
  :mod:`.request_diff` compares their requests.
"""

from __future__ import annotations

from pytest_bfcl.conformance.compare import (
    CategoryAgreement,
    Comparison,
    EntryDifference,
    compare_verdicts,
    render_comparison,
)
from pytest_bfcl.conformance.junit import read_junit_verdicts
from pytest_bfcl.conformance.score_files import EntryVerdict, read_score_dir

__all__ = [
    "CategoryAgreement",
    "Comparison",
    "EntryDifference",
    "EntryVerdict",
    "compare_verdicts",
    "read_junit_verdicts",
    "read_score_dir",
    "render_comparison",
]
