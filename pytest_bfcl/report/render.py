"""Human-readable renderings: the terminal score table and a failing entry's explanation."""

from __future__ import annotations

import json
from typing import Any

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.groups import DISPLAY_ORDER, display_label, shown
from pytest_bfcl.gate import GateResult, top_reason
from pytest_bfcl.report.html.facts import bounded
from pytest_bfcl.scores.models import GroupScore, Scores
from pytest_bfcl.wording import LINE_WIDTH, count, fit_all, listed, signed


def percent(value: float | None) -> str:
    return "not run" if value is None else f"{value * 100:6.2f}%"


def extra_body_note(fields: dict[str, Any]) -> str:
    """The request fields a run added, and what that means for its scores."""
    shown = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return (
        f"request fields beyond the leaderboard's (--bfcl-extra-body): {bounded(shown, 300)}; "
        "scores not comparable to the leaderboard"
    )


def not_comparable_lines(metadata: dict[str, Any]) -> list[str]:
    """One line naming what makes the run's scores not comparable with the leaderboard's."""
    found = metadata.get("leaderboard_deviations") or []
    if not found:
        return []
    return [f"{'; '.join(map(str, found))}: scores not comparable to the leaderboard"]


def model_inputs(metadata: dict[str, Any]) -> dict[str, str]:
    """The files a started server was given, by their content digest (none for others)."""
    info = metadata.get("model_info")
    inputs = info.get("inputs") if isinstance(info, dict) else None
    return {str(k): str(v) for k, v in inputs.items()} if isinstance(inputs, dict) else {}


def identity_notes(metadata: dict[str, Any]) -> list[str]:
    """What a reviewer needs to know of the model asked and of the settings compared: the
    inputs and their digests, the revision, and the request settings declared changed from
    the baseline (the comparison measures their effect)."""
    lines = []
    if inputs := model_inputs(metadata):
        lines.append("model inputs: " + ", ".join(f"{k} ({v})" for k, v in inputs.items()))
    if metadata.get("model_revision"):
        lines.append(f"model revision: {metadata['model_revision']}")
    return lines + [str(line) for line in metadata.get("settings_changes") or []]


def run_properties(metadata: dict[str, Any]) -> dict[str, str]:
    """The junit summary testcases' properties of the run: its model's inputs with their
    digests, its revision, the request settings declared changed from the baseline."""
    found = {}
    if inputs := model_inputs(metadata):
        found["bfcl_model_inputs"] = " ".join(f"{k}@{v}" for k, v in inputs.items())
    if metadata.get("model_revision"):
        found["bfcl_model_revision"] = str(metadata["model_revision"])
    if metadata.get("settings_changes"):
        found["bfcl_settings_changes"] = " ".join(map(str, metadata["settings_changes"]))
    return found


def score_table(scores: Scores, metadata: dict[str, Any]) -> list[str]:
    lines = [
        f"model: {metadata.get('model')}  mode: {metadata.get('mode')}  dataset: "
        f"bfcl-eval {metadata.get('dataset', {}).get('version')}",
        *([str(metadata["leaderboard_note"])] if metadata.get("leaderboard_note") else []),
        *([extra_body_note(metadata["extra_body"])] if metadata.get("extra_body") else []),
        *not_comparable_lines(metadata),
        *identity_notes(metadata),
        *(
            [
                "scoring: --bfcl-partial-eval (each category over the entries present, as the "
                "leaderboard's --partial-eval; missing entries do not count)"
            ]
            if scores.partial_eval
            else []
        ),
        "",
    ]
    samples = max((c.samples for c in scores.categories.values()), default=1)
    if samples > 1:
        lines += [
            f"each entry asked {samples} times: mean = share of samples passed (pass@1), "
            f"pass^{samples} = entries that passed every sample, pass@{samples} = any sample",
            f"{'category':<26}{'entries':>8}{'mean':>9}{'95% CI':>13}{f'pass^{samples}':>9}"
            f"{f'pass@{samples}':>9}{'flaky':>7}  note",
        ]
    else:
        lines.append(
            f"{'category':<26}{'correct':>9}{'total':>7}{'accuracy':>10}{'95% CI':>13}  note"
        )
    for name, cat in scores.categories.items():
        notes = []
        if cat.skipped or cat.excluded:
            reason = top_reason(cat.skip_reasons)
            skipped = cat.skipped + cat.excluded
            notes.append(f"{skipped} skipped" + (f" ({reason})" if reason else ""))
        if cat.errors:
            notes.append(count(cat.errors, "error"))
        if cat.not_run:
            notes.append(f"{cat.not_run} not run")
        if cat.tool_failures:
            search, fetch = cat.tool_failures.get("search", 0), cat.tool_failures.get("fetch", 0)
            notes.append(
                f"web tools failed: {count(search, 'search', 'searches')}, "
                f"{count(fetch, 'fetch', 'fetches')}"
            )
        if cat.sampled_from is not None and cat.ci_low is not None and cat.ci_high is not None:
            notes.append(f"sampled: {cat.total} of {cat.sampled_from}")
        elif not cat.complete:
            notes.append(f"partial: {cat.total}/{cat.dataset_size} scored")
        interval = _interval(*cat.ci95) if cat.ci95 is not None else ""
        if samples > 1:
            row = (
                f"{name:<26}{cat.total:>8}{percent(cat.accuracy):>9}{interval:>13}"
                f"{percent(cat.pass_all):>9}{percent(cat.pass_any):>9}{cat.flaky:>7}"
            )
        else:
            row = (
                f"{name:<26}{cat.correct:>9}{cat.total:>7}{percent(cat.accuracy):>10}{interval:>13}"
            )
        lines.append(f"{row}  " + ", ".join(notes))
    lines += ["", f"{'group':<26}{'score':>10}{'95% CI':>13}"]
    web_skipped = _web_search_skipped(scores)
    ran = {name for name, cat in scores.categories.items() if cat.total}
    for key in DISPLAY_ORDER:
        if not shown(key, ran):
            continue
        label = display_label(key)
        group = scores.groups[key]
        value = "skipped" if key == "web_search" and web_skipped else percent(group.accuracy)
        lines.append(f"{label:<26}{value:>10}{_group_extra(group, samples)}")
    overall = scores.overall
    if scores.overall_without_web_search is not None:
        lines.append(
            f"{'Overall (V4)':<26}{'partial':>10}  web search skipped: "
            f"{percent(scores.overall_without_web_search).strip()} with Agentic = Memory "
            f"(leaderboard formula with web search as 0: "
            f"{percent(overall.reference_accuracy).strip()})"
        )
    elif scores.partial:
        # Not a score of this run: the overall needs categories it did not run (a selection
        # of single-turn categories, say); the 0-filled figure is the leaderboard's formula.
        lines.append(
            f"{'Overall (V4)':<26}{'n/a':>10}  not computed: "
            f"{count(len(overall.missing), 'category', 'categories')} of the overall not run "
            f"({_short_list(overall.missing, 3)}); with them as 0 the leaderboard formula gives "
            f"{percent(overall.reference_accuracy).strip()}"
        )
    else:
        lines.append(
            f"{'Overall (V4)':<26}{percent(overall.accuracy):>10}{_group_extra(overall, samples)}"
        )
    fs = scores.format_sensitivity
    if fs is not None:
        lines.append(
            f"Format sensitivity: max delta {percent(fs.max_delta).strip()}, std "
            f"{percent(fs.std).strip()} over {len(fs.configs)} prompt configs"
        )
    return lines


def _interval(low: float, high: float) -> str:
    return f"{low * 100:.1f}-{high * 100:.1f}%"


def _group_extra(group: GroupScore, samples: int) -> str:
    """A group row after its score: the interval, pass^K, pass@K and flaky entries with
    several samples, and what a sampled group stands for."""
    if group.accuracy is None:
        return ""
    text = f"{_interval(*group.ci95) if group.ci95 is not None else '':>13}"
    if samples > 1:
        text += (
            f"  pass^{samples} {percent(group.pass_all).strip()}, pass@{samples} "
            f"{percent(group.pass_any).strip()}, {group.flaky} flaky"
        )
    return text + _sampled_note(group)


def _sampled_note(group: GroupScore) -> str:
    """``  sampled (364 of 4,441 entries)`` for a sampled group (its interval is in the row)."""
    if group.sampled is None or group.ci_low is None or group.ci_high is None:
        return ""
    scored, population = group.sampled
    return f"  sampled ({scored:,} of {population:,} entries)"


def _web_search_skipped(scores: Scores) -> bool:
    """Web search was selected but every entry was skipped (web access off)."""
    web = [
        c
        for n, c in scores.categories.items()
        if n in CATEGORIES and CATEGORIES[n].kind is Kind.WEB_SEARCH
    ]
    return bool(web) and all(c.total == 0 and c.excluded for c in web)


def _short_list(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _compact(value: Any, limit: int = 600) -> str:
    # Bounded while it is built: a model's value may expand to gigabytes when rendered whole.
    if isinstance(value, str):
        return bounded(json.dumps(value[:limit], ensure_ascii=False), limit)
    return bounded(value, limit)


def explain_failure(verdict: Verdict) -> str:
    """A few readable lines: what the model said, what was expected, and why it failed."""
    reasons = [e if isinstance(e, str) else _compact(e, 300) for e in verdict.errors[:4]]
    lines = [
        f"BFCL {verdict.id} [{verdict.category}] failed: {verdict.error_type}",
        *(f"  reason:   {r}" for r in reasons),
    ]
    if verdict.report:  # multi-step categories explain the failing turn themselves
        return "\n".join(lines + verdict.report)
    lines.append(f"  output:   {_compact(verdict.model_output)}")
    if verdict.decoded is not None:
        lines.append(f"  decoded:  {_compact(verdict.decoded)}")
    if verdict.expected is not None:
        lines.append(f"  expected: {_compact(verdict.expected)}")
    return "\n".join(lines)


def gate_block(gate: GateResult, id_limit: int = 10) -> list[str]:
    """The verdict block: each comparison's baseline, current score, change, p-value, the
    smallest drop it could detect, and its entries that got worse or better."""
    settings = gate.settings
    head = (
        f"gate: {settings.mode} (alpha {settings.alpha}, minimum drop {settings.min_drop} points)"
    )
    lines = [head + ("; compared on the entries both runs have" if gate.common_only else "")]
    if settings.mode == "significant" and gate.family:  # a line of its own: 200 at most
        lines.append(
            f"Holm over {count(gate.family, 'comparison')} ({gate.counted} could reach "
            "significance), "
            f"one-sided: an unchanged model fails it in at most {settings.alpha:.0%} of runs"
        )
    if gate.comparisons:
        lines.append(
            f"{'score':<30}{'baseline':>9}{'current':>9}{'change':>8}{'p-value':>10}"
            f"{'detects':>9}{'worse':>7}{'flaky':>7}{'better':>7}"
        )
    for c in gate.comparisons:
        name = c.label
        detects = "none" if c.detectable_drop is None else f"{c.detectable_drop:.2f}"
        lines.append(
            f"{name:<30}{c.baseline_accuracy * 100:>8.2f}%{c.current_accuracy * 100:>8.2f}%"
            f"{signed(-c.drop_points):>8}{c.p_value:>10.3g}{detects:>9}{len(c.regressions):>7}"
            f"{len(c.flaky_before):>7}{len(c.improvements):>7}" + ("  FAILED" if c.failed else "")
        )
    if gate.comparisons:
        lines.append(
            "detects: measured in this comparison, the smallest drop in points it finds with 80% "
            "power at its size and the noise its entries show (none: too few entries to find any)"
        )
    for c in gate.comparisons:
        if c.kind != "category":
            continue
        if c.regressions:
            label = "regressed" + (" (within noise)" if not c.failed else "")
            lines.append(_id_line(f"{label} in {c.name}: ", c.regressions, id_limit))
        if c.flaky_before:
            lines.append(
                _id_line(f"flaky before, worse now in {c.name}: ", c.flaky_before, id_limit)
            )
    if gate.known_errors:
        lines.append(
            f"left out: {count(len(gate.known_errors), 'entry', 'entries')} with a known "
            "ground-truth error (--bfcl-known-errors=include to compare them)"
        )
    lines += [f"threshold: {failure}" for failure in gate.threshold_failures]
    if gate.incomplete:
        verdict = (
            "allowed by --bfcl-allow-incomplete"
            if gate.allow_incomplete
            else "FAILED (pass --bfcl-allow-incomplete to gate on what was scored)"
        )
        lines.append(f"incomplete: entries not scored, listed above under the scores; {verdict}")
    return fit_all(lines)  # docs/reports.md: no line over 200 characters


def _id_line(label: str, ids: list[str], limit: int) -> str:
    """A label and as many ids as fit on one line (at most ``limit``), then how many more."""
    return label + listed(ids, LINE_WIDTH - len(label), at_most=limit)
