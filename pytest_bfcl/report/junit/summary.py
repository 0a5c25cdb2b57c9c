"""One summary testcase per category in the junit file, and one per group (and the overall
score) the gate compared, for dashboards that chart testcases: its properties carry the scores,
and it fails when the gate failed on that comparison.

The testcases are spliced into the file pytest wrote, as text: parsing and writing back a
junit file of thousands of entries cost more than writing it had."""

from __future__ import annotations

import html
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_bfcl.files import write_text_atomic
from pytest_bfcl.gate import Comparison, GateResult
from pytest_bfcl.report.pending import PREFIXES, Settlement
from pytest_bfcl.scores.models import Scores

_OPENING = re.compile(r"<(testsuites|testsuite)\b[^>]*>")
_COUNT = re.compile(r' (tests|failures|skipped)="(\d+)"')
# An entry's expected failure pending the gate, as pytest and the text testcases write it.
_PENDING = re.compile(
    r'<skipped type="pytest\.xfail" message="((?:'
    + "|".join(map(re.escape, PREFIXES))
    + r')[^"]*)" />'
)
_NAME = re.compile(r'<testcase\b[^>]*? name="([^"]*)"')
_SUITE_END = "</testsuite>"


def add_summary_testcases(
    path: Path,
    scores: Scores,
    gate: GateResult | None,
    explanations: dict[str, str] | None = None,
    run_properties: dict[str, str] | None = None,
) -> None:
    """The summary testcases, and the gate's word on the entries pending it (see
    :mod:`pytest_bfcl.report.pending`): those behind a failing comparison fail.
    ``run_properties``: what every summary testcase carries of the run (the model's inputs,
    the settings changed on purpose)."""
    text, settled = settle_pending_testcases(
        path.read_text("utf-8"), Settlement(gate), explanations
    )
    cases, failed = summary_testcases(scores, gate)
    for case in cases:
        props = case.find("properties")
        for key, value in (run_properties or {}).items():
            if props is not None:
                ET.SubElement(props, "property", name=key, value=value)
    spliced = _splice(text, cases, failed, settled)
    if spliced is None:  # not the shape pytest writes: the XML way
        if settled:
            write_text_atomic(Path(os.path.realpath(path)), text)
        _add_parsed(path, cases, failed, settled)
        return
    # through a link to the file (the link stays)
    write_text_atomic(Path(os.path.realpath(path)), spliced)


def _splice(text: str, cases: list[ET.Element], failed: int, settled: int) -> str | None:
    """The file's text with the testcases before its one suite's end tag and the suite's and
    root's counts changed (``settled``: expected failures turned failures); None if it has
    not exactly one suite with such an end."""
    if text.count(_SUITE_END) != 1:
        return None
    start = text.find("<testsuite ")
    if start < 0:
        return None
    head_end = text.find(">", start) + 1
    counts = {"tests": len(cases), "failures": failed + settled, "skipped": -settled}

    def raise_counts(opening: re.Match[str]) -> str:
        return _COUNT.sub(
            lambda m: f' {m.group(1)}="{int(m.group(2)) + counts[m.group(1)]}"', opening.group(0)
        )

    head = _OPENING.sub(raise_counts, text[:head_end])
    end = text.rindex(_SUITE_END)
    added = "".join(ET.tostring(case, encoding="unicode") for case in cases)
    return head + text[head_end:end] + added + text[end:]


def _add_parsed(path: Path, cases: list[ET.Element], failed: int, settled: int) -> None:
    tree = ET.parse(path)
    root = tree.getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return
    suite.extend(cases)
    for element in {suite, root}:
        if "tests" in element.attrib:
            element.set("tests", str(int(element.get("tests", "0")) + len(cases)))
        if "failures" in element.attrib:
            element.set("failures", str(int(element.get("failures", "0")) + failed + settled))
        if "skipped" in element.attrib:
            element.set("skipped", str(int(element.get("skipped", "0")) - settled))
    tree.write(path, encoding="utf-8", xml_declaration=True)


def settle_pending_testcases(
    text: str, settlement: Settlement, explanations: dict[str, str] | None = None
) -> tuple[str, int]:
    """The junit text with each pending entry's expected failure settled: a failure where the
    gate failed on it, an expected failure within the noise elsewhere; and how many failed.
    ``explanations`` (by entry id: the checker's explanation and the baseline's answer beside
    this run's) become the element's text, whichever writer wrote the testcase."""
    explanations = explanations or {}
    pieces: list[str] = []
    last, failed = 0, 0
    for match in _PENDING.finditer(text):
        opening = text.rfind("<testcase ", 0, match.start())
        name = _NAME.match(text, opening) if opening >= 0 else None
        if name is None:
            continue
        reason = html.unescape(match.group(1))
        entry_id = html.unescape(name.group(1))
        settled = settlement.settle(entry_id, reason)
        explanation = explanations.get(entry_id)
        if settled.failed:
            element = ET.Element("failure", message=settled.reason)
            element.text = "\n".join(filter(None, [settled.reason, explanation]))
            failed += 1
        else:
            element = ET.Element("skipped", type="pytest.xfail", message=settled.reason)
            element.text = explanation
        pieces += (text[last : match.start()], ET.tostring(element, encoding="unicode"))
        last = match.end()
    return "".join([*pieces, text[last:]]), failed


def summary_testcases(scores: Scores, gate: GateResult | None) -> tuple[list[ET.Element], int]:
    """The summary testcases (each category, then each group and the overall score the gate
    compared), and how many of them fail."""
    cases: list[ET.Element] = []
    # A category's row carries its own comparison: a group's name is never a category's, and
    # the lookup keeps to categories all the same.
    compared = {c.name: c for c in gate.comparisons if c.kind == "category"} if gate else {}
    # a category's threshold it missed (--bfcl-min-score): the line starts with its name
    missed = gate.threshold_failures if gate else []
    thresholds = {line.split(":", 1)[0]: line for line in missed}
    for name, cat in scores.categories.items():
        values = {
            "bfcl_kind": "category",
            "bfcl_accuracy": "" if cat.accuracy is None else f"{cat.accuracy:.6f}",
            "bfcl_correct": str(cat.correct),
            "bfcl_total": str(cat.total),
            "bfcl_complete": str(cat.complete).lower(),
            "bfcl_samples": str(cat.samples),
            "bfcl_flaky": str(cat.flaky),
        }
        if cat.ci95 is not None:
            values["bfcl_ci95_low"] = f"{cat.ci95[0]:.6f}"
            values["bfcl_ci95_high"] = f"{cat.ci95[1]:.6f}"
        if cat.pass_all is not None and cat.pass_any is not None:
            values["bfcl_pass_all"] = f"{cat.pass_all:.6f}"
            values["bfcl_pass_any"] = f"{cat.pass_any:.6f}"
        case = _testcase(name, values, compared.get(name))
        if name in thresholds and case.find("failure") is None:
            ET.SubElement(case, "failure", message=thresholds[name])
        cases.append(case)
    for comparison in gate.comparisons if gate else []:
        if comparison.kind != "category":  # groups and the overall score, as compared
            values = {
                "bfcl_kind": comparison.kind,
                "bfcl_accuracy": f"{comparison.current_accuracy:.6f}",
                "bfcl_total": str(comparison.paired),
            }
            cases.append(_testcase(comparison.name, values, comparison))
    failed = sum(1 for case in cases if case.find("failure") is not None)
    return cases, failed


def _testcase(name: str, values: dict[str, str], comparison: Comparison | None) -> ET.Element:
    case = ET.Element("testcase", classname="bfcl.summary", name=name, time="0")
    props = ET.SubElement(case, "properties")
    if comparison is not None:
        values["bfcl_baseline_accuracy"] = f"{comparison.baseline_accuracy:.6f}"
        values["bfcl_p_value"] = f"{comparison.p_value:.6g}"
        values["bfcl_regressions"] = str(len(comparison.regressions))
        values["bfcl_flaky_before"] = str(len(comparison.flaky_before))
        if comparison.detectable_drop is not None:
            # measured in this comparison (a sampled run's plan is in the JSON report)
            values["bfcl_detectable_drop"] = f"{comparison.detectable_drop:.2f}"
    for key, value in values.items():
        ET.SubElement(props, "property", name=key, value=value)
    if comparison is not None and comparison.failed:
        failure = ET.SubElement(
            case,
            "failure",
            message=f"{comparison.label} dropped {comparison.drop_points:.2f} points "
            f"(p={comparison.p_value:.3g})",
        )
        failure.text = "regressed: " + ", ".join(comparison.regressions)
    return case
