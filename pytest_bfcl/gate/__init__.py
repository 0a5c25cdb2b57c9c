"""The gate: whether a run fails its baseline, and everything that decision rests on.

What the reports, the session and the tools read of it is exported here, and only here:

- baselines: :class:`Baseline` (per-entry verdicts and rates, stamps, signature), loaded,
  saved, merged and checked against a run (``baseline.py``, ``baseline_integrity.py``,
  ``baseline_signature.py``), and the recorded run's answers they carry
  (:class:`BaselineAnswers`, ``baseline_answers.py``);
- the decision: :func:`evaluate_gate` and its :class:`GateResult` of :class:`Comparison` rows
  (``decision.py``: the pooled-sample permutation test of ``permutation.py`` on each
  category, group and the overall, Holm's step-down with Tarone's rule, the 1-point rule);
- what a comparison can detect and how many entries a drop needs (``detection.py``, with the
  power and noise of ``stats.py``);
- whether the run is complete enough to decide (``completeness.py``);
- the sequential gate's stages and stopping rule (``sequential.py``).

Score intervals are the score board's (:mod:`pytest_bfcl.scores`), not the gate's.
"""

from __future__ import annotations

from pytest_bfcl.gate.baseline import (
    Baseline,
    BaselineError,
    baseline_data,
    incompatibilities,
    load_baseline,
    merge_baselines,
    stamp_differences,
    version_note,
)
from pytest_bfcl.gate.baseline_answers import ANSWER_LIMIT, BaselineAnswers, cut_answer
from pytest_bfcl.gate.baseline_integrity import new_run_id
from pytest_bfcl.gate.baseline_signature import SignatureError, signed, signing_key
from pytest_bfcl.gate.completeness import incompleteness, missing_by_category, top_reason
from pytest_bfcl.gate.decision import Comparison, GateResult, evaluate_gate
from pytest_bfcl.gate.detection import (
    Detection,
    category_noise,
    detection_lines,
    detection_summary,
    detections,
    plan,
)
from pytest_bfcl.gate.sequential import (
    SPENDING,
    STAGES,
    SequentialRecord,
    StageCost,
    StageDecision,
    StagedGate,
    decide_stage,
    extension_line,
    sequential_plan,
    staged_gate,
    stop_reason,
)
from pytest_bfcl.gate.settings_change import (
    SettingDifference,
    extra_body_digest,
    measured_note,
    refusal_hint,
    setting_differences,
)

__all__ = [
    "ANSWER_LIMIT",
    "SPENDING",
    "STAGES",
    "Baseline",
    "BaselineAnswers",
    "BaselineError",
    "Comparison",
    "Detection",
    "GateResult",
    "SequentialRecord",
    "SettingDifference",
    "SignatureError",
    "StageCost",
    "StageDecision",
    "StagedGate",
    "baseline_data",
    "category_noise",
    "cut_answer",
    "decide_stage",
    "detection_lines",
    "detection_summary",
    "detections",
    "evaluate_gate",
    "extension_line",
    "extra_body_digest",
    "incompatibilities",
    "incompleteness",
    "load_baseline",
    "measured_note",
    "merge_baselines",
    "missing_by_category",
    "new_run_id",
    "plan",
    "refusal_hint",
    "sequential_plan",
    "setting_differences",
    "signed",
    "signing_key",
    "staged_gate",
    "stamp_differences",
    "stop_reason",
    "top_reason",
    "version_note",
]
