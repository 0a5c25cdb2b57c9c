"""One summary testcase per category in the junit file, for dashboards that chart testcases:
its properties carry the scores, and it fails when the gate failed on that category."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_bfcl.report.gate import GateResult
from pytest_bfcl.report.scores import Scores


def add_summary_testcases(path: Path, scores: Scores, gate: GateResult | None) -> None:
    tree = ET.parse(path)
    root = tree.getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return
    compared = {c.name: c for c in gate.comparisons} if gate else {}
    added = failed = 0
    for name, cat in scores.categories.items():
        case = ET.SubElement(suite, "testcase", classname="bfcl.summary", name=name, time="0")
        props = ET.SubElement(case, "properties")
        values = {
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
        comparison = compared.get(name)
        if comparison is not None:
            values["bfcl_baseline_accuracy"] = f"{comparison.baseline_accuracy:.6f}"
            values["bfcl_p_value"] = f"{comparison.p_value:.6g}"
            values["bfcl_regressions"] = str(len(comparison.regressions))
            values["bfcl_flaky_before"] = str(len(comparison.flaky_before))
            if comparison.detectable_drop is not None:
                values["bfcl_detectable_drop"] = f"{comparison.detectable_drop:.2f}"
        for key, value in values.items():
            ET.SubElement(props, "property", name=key, value=value)
        if comparison is not None and comparison.failed:
            failure = ET.SubElement(
                case,
                "failure",
                message=f"{name} dropped {comparison.drop_points:.2f} points "
                f"(p={comparison.p_value:.3g})",
            )
            failure.text = "regressed: " + ", ".join(comparison.regressions)
            failed += 1
        added += 1
    for element in {suite, root}:
        if "tests" in element.attrib:
            element.set("tests", str(int(element.get("tests", "0")) + added))
        if "failures" in element.attrib:
            element.set("failures", str(int(element.get("failures", "0")) + failed))
    tree.write(path, encoding="utf-8", xml_declaration=True)
