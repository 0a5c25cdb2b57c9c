"""The baseline's answer beside the current one for every entry that changed: in a
regression's junit text, an improvement's junit properties, ``--bfcl-explain``, the JSON
report; and a baseline without answers says why none are shown."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from gate_scenario import WRONG, ids


def _cases(path):
    return {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}


def test_a_regression_shows_the_baseline_answer_beside_the_current_one(gate_env, tmp_path):
    run, baseline = gate_env
    assert json.loads(baseline.read_text())["answers"]["entries"] == 400
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    result = run(
        ids([0, 1, 30, 31]),  # 0 and 1 fail in the baseline too; 30 and 31 regress
        f"--junitxml={junit}",
        f"--bfcl-report={report}",
        "--bfcl-explain=simple_python_30",
        "--bfcl-explain=simple_python_5",  # improved: fails in the baseline, passes now
    )
    cases = _cases(junit)
    # two flips inside the noise: an expected failure that says so, its text the explanation
    # with both answers
    within_noise = cases["simple_python_30"].find("skipped")
    assert within_noise.get("message").startswith("worse than the baseline within the noise")
    text = within_noise.text
    baseline_line = next(line for line in text.splitlines() if line.startswith("  baseline: "))
    assert "kinematics_final_velocity_from_distance" in baseline_line
    assert f"  now:      {WRONG}" in text.splitlines()
    # an improvement: a passed testcase, both answers as its properties
    props = {p.get("name"): p.get("value") for p in cases["simple_python_5"].iter("property")}
    assert props["bfcl_baseline_answer"] == WRONG and "solve_quadratic" in props["bfcl_answer"]
    # entries that did not change carry neither
    assert "bfcl_answer" not in {p.get("name") for p in cases["simple_python_50"].iter("property")}

    out = result.stdout.str()
    assert "simple_python_5 [simple_python] improved" in out
    assert f"  baseline: {WRONG}" in out  # the improvement's explanation
    assert '  baseline: [{"kinematics_final_velocity_from_distance"' in out

    changes = json.loads(report.read_text())["changes"]
    assert changes["note"] is None and changes["baseline_answers"] == 400
    regressed = {c["id"]: c for c in changes["regressions"]}
    assert set(regressed) == {"simple_python_30", "simple_python_31"}
    assert regressed["simple_python_30"]["answer"] == WRONG
    assert "kinematics" in regressed["simple_python_30"]["baseline_answer"]
    improved = {c["id"]: c for c in changes["improvements"]}
    assert set(improved) == ids(range(2, 20))
    assert all(c["baseline_answer"] == WRONG and c["answer"] != WRONG for c in improved.values())


def test_a_baseline_without_answers_still_gates_and_says_why_none(gate_env, tmp_path):
    run, baseline = gate_env
    data = json.loads(baseline.read_text())
    del data["answers"]  # as recorded before baselines kept answers
    baseline.write_text(json.dumps(data))
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    result = run(
        ids(range(20)) | ids(range(30, 60)), f"--junitxml={junit}", f"--bfcl-report={report}"
    )
    assert "BFCL gate: FAILED" in result.stdout.str()
    text = _cases(junit)["simple_python_30"].find("failure").text
    assert "  baseline: (none: the baseline holds no answers" in text
    changes = json.loads(report.read_text())["changes"]
    assert changes["note"].startswith("the baseline holds no answers")
    assert len(changes["regressions"]) == 30
    assert all(c["baseline_answer"] is None for c in changes["regressions"])
    assert all(c["answer"] == WRONG for c in changes["regressions"])


def test_a_multi_turn_regression_keeps_its_failing_turn_and_state_difference(
    pytester, data_source, tmp_path
):
    common = [
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-category=multi_turn_base",
        "-k",
        "multi_turn_base_0 or multi_turn_base_1 or multi_turn_base_2",
        "-p",
        "no:cacheprovider",
    ]
    baseline, junit = tmp_path / "baseline.json", tmp_path / "junit.xml"
    pytester.runpytest("--bfcl-model=oracle", f"--bfcl-save-baseline={baseline}", *common)
    pytester.runpytest(
        "--bfcl-model=oracle:fail=1.0",
        f"--bfcl-baseline={baseline}",
        f"--junitxml={junit}",
        "--bfcl-allow-incomplete",
        *common,
    )
    text = _cases(junit)["multi_turn_base_0"].find("failure").text
    lines = text.splitlines()
    assert lines[0].startswith("REGRESSION (passed in the baseline; the gate failed on ")
    assert "): multi_turn_base_0 [multi_turn_base] failed" in lines[0]
    assert any(line.lstrip().startswith("turn 0") for line in lines)  # the failing turn
    # then the two answers at the turn that failed
    assert lines[-2].startswith('  baseline, turn 0: [[{"cd": ') and '"mkdir"' in lines[-2]
    assert '"grep"' not in lines[-2]  # a later turn's calls
    assert lines[-1] == '  now, turn 0:      ["I have completed this request."]'


def test_secrets_in_answers_are_masked_before_a_baseline_keeps_them():
    from pytest_bfcl.report.answers import redacted_answers

    answers = {
        "a": "call it with Authorization: Bearer sk-live-123456 please",
        "b": '[{"f": "{\\"x\\": 1}"}]',
    }
    masked = redacted_answers(answers)
    assert "sk-live-123456" not in masked["a"] and "***" in masked["a"]
    assert masked["b"] == answers["b"]


def test_an_answer_cannot_drive_the_terminal_it_is_printed_on():
    from pytest_bfcl.gate.baseline_answers import BaselineAnswers, pack_answers
    from pytest_bfcl.report.answers import baseline_lines

    hostile = "\x1b[2J\x1b[31mall green\x1b[0m\rPASSED \u202eevil\x00"
    answers = BaselineAnswers(pack_answers({"simple_python_0": hostile}))
    lines = baseline_lines("simple_python_0", answers, hostile)
    assert len(lines) == 2
    for line in lines:
        assert line.isprintable() and "\x1b" not in line and "\u202e" not in line
        assert "\\u001b[31mall green" in line and "\\u202eevil" in line


def test_a_stored_conversation_nested_past_the_stack_reads_as_whole_answers():
    from pytest_bfcl.gate.baseline_answers import BaselineAnswers, pack_answers
    from pytest_bfcl.report.answers import baseline_lines

    deep = "[" * 1900 + "]" * 1900  # under the answer's length cap, past the parser's stack
    answers = BaselineAnswers(pack_answers({"multi_turn_base_0": deep}))
    lines = baseline_lines("multi_turn_base_0", answers, deep, turn=1)
    assert lines[0].startswith("  baseline: [[[") and lines[1].startswith("  now:      [[[")
