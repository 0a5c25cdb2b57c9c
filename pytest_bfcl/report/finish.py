"""The end of a run, behind one call: scores, completeness, the gate, every report file, and
the closing lines of the terminal. Works without pytest (the plugin hands in what the
session collected)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset import known_errors as listed_errors
from pytest_bfcl.dataset.categories import natural_key
from pytest_bfcl.files import (
    os_error_text,
    refuse_unfit_output,
    write_json_atomic,
    write_text_atomic,
)
from pytest_bfcl.gate import (
    Baseline,
    BaselineAnswers,
    Detection,
    GateResult,
    SequentialRecord,
    baseline_data,
    category_noise,
    detection_lines,
    detections,
    evaluate_gate,
    incompleteness,
    missing_by_category,
    new_run_id,
    signed,
    signing_key,
    version_note,
)
from pytest_bfcl.report.answers import changes_report, redacted_answers
from pytest_bfcl.report.chart import svg_chart
from pytest_bfcl.report.csv_tables import csv_tables, write_csv_tables
from pytest_bfcl.report.html.builder import HtmlBuilder
from pytest_bfcl.report.html.entries import HtmlEntries
from pytest_bfcl.report.json_report import build_report
from pytest_bfcl.report.junit.summary import add_summary_testcases
from pytest_bfcl.report.markdown import markdown_summary
from pytest_bfcl.report.render import gate_block, run_properties, score_table
from pytest_bfcl.report.usage import replica_lines, usage_line
from pytest_bfcl.scores.board import ScoreBoard, Scores
from pytest_bfcl.scoring import CONTEXT_ERROR_TYPE
from pytest_bfcl.settings import Settings
from pytest_bfcl.wording import LINE_WIDTH, fit_all, listed

# Characters of a failure's reason in the terminal list.
REASON_WIDTH = 160


@dataclass(frozen=True)
class FailureNote:
    """One failing entry, as the closing list shows it."""

    id: str
    category: str
    error_type: str
    reason: str
    regression: bool = False  # worse than the baseline, and the gate failed on it
    # Worse than the baseline: pending the gate while the run lasts, then a regression or
    # within the noise.
    pending: bool = False
    within_noise: bool = False

    def settled(self, failed: bool) -> FailureNote:
        return replace(self, pending=False, regression=failed, within_noise=not failed)

    def line(self) -> str:
        mark = "REGRESSION " if self.regression else ""
        if self.within_noise:
            mark = "WORSE (within the noise) "
        reason = self.reason if len(self.reason) <= REASON_WIDTH else self.reason[:157] + "..."
        return f"{mark}{self.id} [{self.category}] {self.error_type}: {reason}"


@dataclass
class RunOutcome:
    """What the session collected, handed to :func:`finish_run`."""

    board: ScoreBoard
    settings: Settings
    metadata: dict[str, Any]
    model_name: str
    baseline: Baseline | None = None
    usage: dict[str, Any] | None = None
    # The HTML report's entries, gathered as they finished (--bfcl-html).
    html_entries: HtmlEntries | HtmlBuilder = field(default_factory=HtmlEntries)
    failures: list[FailureNote] = field(default_factory=list)
    explanations: dict[str, str] = field(default_factory=dict)  # --bfcl-explain
    # The answers the run kept, by entry id (every entry's when a baseline is saved, else
    # those whose verdict changed from the baseline's), and the baseline's.
    answers: dict[str, str] = field(default_factory=dict)
    baseline_answers: BaselineAnswers | None = None
    junit_path: Path | None = None
    junit_not_written: str | None = None  # why the BFCL testcases are not in the junit file
    step_summary: Path | None = None  # $GITHUB_STEP_SUMMARY
    results_root: Path | None = None
    # Entries the gate leaves out: those with a known ground-truth error (by default).
    gate_exclusions: frozenset[str] = frozenset()
    # Categories of the default selection left out for a missing extra (category -> extra),
    # and the line that names them.
    left_out_extras: dict[str, str] = field(default_factory=dict)
    left_out: str | None = None
    # --bfcl-sequential: the stages asked and why the run stopped
    sequential: SequentialRecord | None = None
    # --bfcl-sequential: its gate on what was scored (each comparison over the stages it
    # completed), which replaces the ordinary one
    sequential_gate: Callable[[], GateResult | None] | None = None
    # The selection narrowed on the command line: the line that says so.
    narrowed: str | None = None
    # Entries worse than the baseline, pending the gate: their explanation (and the baseline's
    # answer beside this run's), kept in the junit testcase the gate settles
    pending_explanations: dict[str, str] = field(default_factory=dict)


@dataclass
class FinishedRun:
    scores: Scores
    gate: GateResult | None
    incomplete: list[str]
    written: list[tuple[str, Path]]  # (what, where), for the closing lines
    # (what, where, why): report files a full or read-only disk refused
    not_written: list[tuple[str, Path, str]] = field(default_factory=list)


def finish_run(outcome: RunOutcome) -> FinishedRun:
    """Scores, completeness and the gate; then every report file the settings ask for."""
    board, settings, baseline = outcome.board, outcome.settings, outcome.baseline
    scores = board.scores(partial_eval=settings.partial_eval)
    unpaired = None
    if baseline is not None and not settings.baseline_common:
        unpaired = board.unpaired(baseline.verdicts, baseline.covered_categories)
    incomplete = incompleteness(scores, unpaired)
    gate = evaluate_gate(
        scores,
        board.verdict_rates(),
        baseline.pass_rates() if baseline is not None else None,
        settings.gate,
        settings.min_scores,
        common_only=settings.baseline_common,
        incomplete=incomplete,
        allow_incomplete=settings.allow_incomplete,
        exclude=outcome.gate_exclusions,
    )
    staged = outcome.sequential_gate() if outcome.sequential_gate is not None else None
    if staged is not None and gate is not None:
        gate = staged.model_copy(
            update={
                "threshold_failures": gate.threshold_failures,
                "incomplete": gate.incomplete,
                "allow_incomplete": gate.allow_incomplete,
                "common_only": gate.common_only,
                "known_errors": gate.known_errors,
            }
        )
    finished = FinishedRun(scores, gate, incomplete, [])
    write_reports(outcome, finished)
    return finished


def write_reports(outcome: RunOutcome, finished: FinishedRun) -> None:
    """Every report file the settings ask for. One that cannot be written (a full or
    read-only disk) is one line in the closing part; the others are written all the same."""
    settings = outcome.settings
    metadata = {**outcome.metadata, "finished_at": datetime.now(timezone.utc).isoformat()}
    scores, gate = finished.scores, finished.gate

    def write(what: str, path: Path | None, action: Callable[[Path], Any]) -> None:
        if path is None:
            return
        try:
            action(path)
        except OSError as exc:
            finished.not_written.append((what, path, os_error_text(exc)))
        else:
            finished.written.append((what, path))

    write(
        "JSON report",
        settings.report_path,
        lambda p: write_json_atomic(p, json_report(outcome, finished)),
    )
    write("HTML report", settings.html_path, lambda p: _write_html(p, outcome, finished, metadata))
    if settings.save_baseline_path is not None and not outcome.board.verdicts:
        # --collect-only, a -k that matched nothing, a run stopped at once: a baseline already
        # there is worth more than an empty one
        why = "nothing was scored (a baseline already there is left as it was)"
        finished.not_written.append(("baseline", settings.save_baseline_path, why))
    else:
        write(
            "baseline",
            settings.save_baseline_path,
            lambda p: _save_baseline(p, outcome, finished, metadata),
        )
    if settings.csv_dir is not None:
        cost = (outcome.usage or {}).get("cost_usd")
        tables = csv_tables(scores, outcome.model_name, outcome.board.latencies, cost)
        write("CSV tables", settings.csv_dir, lambda p: write_csv_tables(p, tables))
    if settings.chart_path is not None:
        chart = svg_chart(scores, gate, f"BFCL V4: {outcome.model_name}")
        write("chart", settings.chart_path, lambda p: write_text_atomic(p, chart))
    if outcome.junit_path is not None and outcome.junit_not_written is not None:
        finished.not_written.append(("junit", outcome.junit_path, outcome.junit_not_written))
    elif outcome.junit_path is not None and outcome.junit_path.is_file():
        write(
            "junit",
            outcome.junit_path,
            lambda p: add_summary_testcases(
                p, scores, gate, outcome.pending_explanations, run_properties(outcome.metadata)
            ),
        )
    if outcome.results_root is not None and _holds_a_file(outcome.results_root):
        finished.written.append(("generations", outcome.results_root))
    elif outcome.results_root is not None and outcome.board.verdicts:
        why = "no result could be written there (the warning above says why)"
        finished.not_written.append(("generations", outcome.results_root, why))
    if outcome.step_summary is not None:
        html = settings.html_path.name if settings.html_path is not None else None
        summary = markdown_summary(scores, metadata, gate, html)
        write("step summary", outcome.step_summary, lambda p: _append(p, summary))


def _holds_a_file(folder: Path) -> bool:
    """Whether anything was written under ``folder`` (a read-only mount leaves it empty)."""
    try:
        return any(path.is_file() for path in folder.rglob("*"))
    except OSError:
        return False


def _write_html(
    path: Path, outcome: RunOutcome, finished: FinishedRun, metadata: dict[str, Any]
) -> None:
    from pytest_bfcl.report.html.page import write_html  # only runs that ask for it load it

    answers = outcome.baseline_answers or BaselineAnswers.of(outcome.baseline)
    changes = changes_report(finished.gate, answers, outcome.answers)
    sequential = outcome.sequential.report() if outcome.sequential is not None else None
    if outcome.sequential is not None:  # the facts line says it too, beside the model
        metadata = {**metadata, "sequential_summary": outcome.sequential.summary()}
    entries, scores, gate = outcome.html_entries, finished.scores, finished.gate
    write_html(path, entries, scores, gate, metadata, sequential, changes)


def _save_baseline(
    path: Path, outcome: RunOutcome, finished: FinishedRun, metadata: dict[str, Any]
) -> None:
    portable = {**metadata, "dataset": {**metadata["dataset"], "data_dir": None}}
    portable["run_id"] = new_run_id()  # a merge takes each recorded run once
    data = baseline_data(
        outcome.board.verdicts,
        portable,  # no machine-specific paths in a file meant to be committed
        finished.scores.model_dump(mode="json")["categories"],
        {name: len(ids) for name, ids in outcome.board.expected.items()},
        outcome.board.rates,
        redacted_answers({i: a for i, a in outcome.answers.items() if i in outcome.board.verdicts}),
    )
    write_json_atomic(path, signed(data, signing_key(outcome.settings.baseline_key_env)))


def _append(path: Path, text: str) -> None:
    refuse_unfit_output(path)  # a FIFO there would block the run's end
    with open(path, "a", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(text)


def json_report(outcome: RunOutcome, finished: FinishedRun) -> dict[str, Any]:
    report = build_report(finished.scores, outcome.metadata)
    gate = finished.gate
    report["gate"] = None if gate is None else gate.model_dump(mode="json")
    report["narrowed"] = outcome.narrowed  # the command line narrowed the selection
    report["complete"] = not finished.incomplete
    report["incomplete"] = finished.incomplete
    report["usage"] = outcome.usage
    if outcome.baseline is not None:
        report["baseline"] = {
            "path": str(outcome.settings.baseline_path),
            "metadata": outcome.baseline.metadata,
            "common_only": outcome.settings.baseline_common,
            "samples": outcome.baseline.samples,
            "flaky": len(outcome.baseline.flaky),
            "note": version_note(outcome.baseline, outcome.metadata),
        }
    report["left_out"] = outcome.left_out_extras  # not installed here: category -> extra
    report["known_errors"] = known_error_report(outcome)
    report["detection"] = detection_report(outcome, finished)
    answers = outcome.baseline_answers or BaselineAnswers.of(outcome.baseline)
    report["changes"] = changes_report(gate, answers, outcome.answers)
    report["sequential"] = outcome.sequential.report() if outcome.sequential else None
    return report


def run_detections(outcome: RunOutcome, finished: FinishedRun) -> list[Detection]:
    """For a sampled run (--bfcl-sample, --bfcl-detect): what each category's sample can
    detect; empty for a full run, whose gate table says it per comparison."""
    settings = outcome.settings
    if settings.sample is None and settings.detect is None:
        return []
    sizes = {n: c.total for n, c in finished.scores.categories.items() if c.total}
    baseline = outcome.baseline
    other = baseline.samples if baseline is not None else settings.samples
    noise = category_noise(baseline.rates, settings.samples) if baseline is not None else {}
    noise.update(category_noise(outcome.board.rates, other))
    return detections(sizes, noise, settings.gate.alpha, settings.gate.min_drop)


# The two "detects" figures of a sampled run, told apart where both are printed.
PLANNED_NOTE = (
    "planned: from each sample's size and the noise assumed (or measured over repeated "
    "samples), as --bfcl-detect plans; the gate's 'detects' is measured in each comparison"
)


def detection_report(outcome: RunOutcome, finished: FinishedRun) -> list[dict[str, Any]]:
    return [
        {**d.model_dump(mode="json"), "basis": "planned"} for d in run_detections(outcome, finished)
    ]


def known_error_report(outcome: RunOutcome) -> dict[str, Any]:
    """The entries of this run with a known ground-truth error, and what the gate did."""
    listed = listed_errors.known_errors()
    scored = sorted((i for i in outcome.board.verdicts if i in listed), key=natural_key)
    return {
        "policy": outcome.settings.known_errors,
        "entries": [
            {
                "id": entry_id,
                "reference": listed[entry_id].reference,
                "problem": listed[entry_id].problem,
                "corrected": outcome.settings.known_errors == "correct"
                and listed[entry_id].fix is not None,
                "in_gate": entry_id not in outcome.gate_exclusions,
            }
            for entry_id in scored
        ],
    }


def closing_sections(outcome: RunOutcome, finished: FinishedRun) -> list[tuple[str, list[str]]]:
    """The terminal's closing part, as (title, lines) sections: the score table with what was
    not scored and the usage, the failures (at most ``--bfcl-list-failures``), the gate, and
    the files written."""
    settings = outcome.settings
    scores = [*score_table(finished.scores, outcome.metadata)]
    if outcome.left_out:
        scores += ["", outcome.left_out]
    if outcome.narrowed:
        scores += ["", outcome.narrowed]
    if finished.incomplete:
        allowed = " (allowed by --bfcl-allow-incomplete)" if settings.allow_incomplete else ""
        scores += ["", f"incomplete run{allowed}: entries not scored"]
        scores += [f"  {line}" for line in finished.incomplete]
    refused = sum(f.error_type == CONTEXT_ERROR_TYPE for f in outcome.failures)
    if refused:
        scores.append(
            f"{refused} {'entry' if refused == 1 else 'entries'} refused by the server as longer "
            "than the model's context window (scored as failures, as the leaderboard does)"
        )
    usage = usage_line(outcome.usage) if outcome.usage else None
    if usage:
        scores.append(usage)
    if outcome.usage and outcome.usage.get("replicas"):
        scores += replica_lines(outcome.usage["replicas"])
    sections = [("BFCL V4 scores", scores)]
    failures = failure_lines(outcome.failures, settings.list_failures, outcome.explanations)
    if failures:
        noise = sum(f.within_noise for f in outcome.failures)
        title = f"BFCL failures: {len(outcome.failures) - noise}"
        sections.append((title + (f", {noise} worse within the noise" if noise else ""), failures))
    found = run_detections(outcome, finished)
    if found:
        planned = (
            f"; sized to detect {settings.detect:g} points" if settings.detect is not None else ""
        )
        title = (
            f"BFCL what this sample can detect, planned (80% power, alpha {settings.gate.alpha}"
            f"{planned})"
        )
        sections.append((title, [*detection_lines(found), PLANNED_NOTE]))
    if outcome.sequential is not None:
        sections.append(("BFCL sequential gate", [outcome.sequential.summary()]))
    if finished.gate is not None:
        title = f"BFCL gate: {finished.gate.verdict}"
        lines = gate_block(finished.gate)
        note = version_note(outcome.baseline, outcome.metadata) if outcome.baseline else None
        notes = [n for n in (outcome.narrowed, note) if n]
        sections.append((title, [*lines, *notes]))
    if finished.written:
        width = max(len(what) for what, _ in finished.written)
        lines = [f"{what:<{width}}  {path}" for what, path in finished.written]
        saved = settings.save_baseline_path in {path for _, path in finished.written}
        warning = incomplete_baseline_warning(finished.scores) if saved else None
        if warning:
            lines.append(warning)
        sections.append(("BFCL files written", lines))
    if finished.not_written:
        width = max(len(what) for what, _, _ in finished.not_written)
        lines = [f"{what:<{width}}  {path}: {why}" for what, path, why in finished.not_written]
        sections.append(("BFCL files not written", lines))
    return [(title, fit_all(lines)) for title, lines in sections]  # at most 200 characters


def incomplete_baseline_warning(scores: Scores) -> str | None:
    """One line when the baseline just saved lacks entries of its run, naming the categories
    (runs compared with it cannot tell a regression there); ``None`` when it has them all."""
    missing = [
        f"{name} ({cat.missing} of {cat.expected})"
        for name, cat in missing_by_category(scores).items()
    ]
    if not missing:
        return None
    label = "warning: the baseline was saved from an incomplete run; not scored: "
    return label + listed(missing, LINE_WIDTH - len(label), at_most=len(missing))


def failure_lines(
    failures: list[FailureNote], limit: int, explanations: dict[str, str]
) -> list[str]:
    """Regressions first, then the rest in entry order, at most ``limit`` of them; entries named
    with ``--bfcl-explain`` in full."""
    ordered = sorted(
        failures, key=lambda f: (not f.regression, not f.within_noise, natural_key(f.id))
    )
    lines = [f.line() for f in ordered[:limit]]
    if len(ordered) > limit:
        lines.append(
            f"... and {len(ordered) - limit} more (all in the HTML report, --bfcl-html; one in "
            "full with --bfcl-explain ID; more here with --bfcl-list-failures N)"
        )
    for entry_id, text in explanations.items():
        lines += (
            ["", *text.splitlines()]
            if text
            else ["", f"{entry_id}: no failure to explain (it passed, or did not run)"]
        )
    return lines
