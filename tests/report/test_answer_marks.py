"""An empty answer and one the server cut at the output-token limit are shown as such, with
the cut one's length, in the junit text, the terminal, the HTML record, compare and the
baseline; never as a blank ``now:``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from gate_scenario import ids

from pytest_bfcl.check.verdict import Verdict
from pytest_bfcl.compare import main as compare_main
from pytest_bfcl.gate import BaselineAnswers, load_baseline
from pytest_bfcl.gate.baseline_answers import pack_answers
from pytest_bfcl.models.base import Generation
from pytest_bfcl.report.answers import (
    CUT_MARK,
    LINE_LIMIT,
    answer_text,
    baseline_lines,
    shown_answer,
)
from pytest_bfcl.report.html.answer_diff import EMPTY_ANSWER, answer_fields
from pytest_bfcl.testing.scripted_answers import Script


def _verdict(output: Any) -> Verdict:
    return Verdict(id="simple_python_1", category="simple_python", valid=False, model_output=output)


def _answers(text: str) -> BaselineAnswers:
    return BaselineAnswers(pack_answers({"simple_python_1": text}))


def test_an_answer_cut_at_the_token_limit_starts_with_a_mark_and_its_length():
    long = "x" * 5000
    cut = Generation(id="simple_python_1", result=long, finish_reason="length", output_tokens=512)
    text = answer_text(_verdict(long), cut)
    assert text.startswith("[cut at the token limit after 512 output tokens] xxx")
    # a Responses API answer stopped for the same reason; an empty one cut says so too
    responses = Generation(id="simple_python_1", result="", finish_reason="max_output_tokens")
    assert answer_text(_verdict(""), responses) == f"{CUT_MARK}; nothing before it]"
    # finished answers carry no mark
    done = Generation(id="simple_python_1", result="x", finish_reason="stop", output_tokens=3)
    assert answer_text(_verdict("x"), done) == "x" and answer_text(_verdict("x")) == "x"
    # the mark survives the line's bound: it is what a reader must see first
    (line,) = [ln for ln in baseline_lines("other", _answers("b"), text) if "now:" in ln]
    assert len(line) <= LINE_LIMIT + 20 and "cut at the token limit after 512" in line


def test_an_empty_answer_reads_as_one_in_the_text_and_the_page():
    lines = baseline_lines("simple_python_1", _answers('[{"f": "{}"}]'), "  ")
    assert lines[-1] == f"  now:      {EMPTY_ANSWER}"
    lines = baseline_lines("simple_python_1", _answers(""), "[]")
    assert lines[0] == f"  baseline: {EMPTY_ANSWER}"
    fields = answer_fields("", '[{"f": "{}"}]')
    assert fields["baseline_answer"] == EMPTY_ANSWER and fields["answer"] == '[{"f": "{}"}]'
    assert shown_answer(None) is None and shown_answer("a") == "a"


def _run(pytester, *args: str):
    return pytester.runpytest("-p", "no:cacheprovider", "--bfcl-category=simple_python", *args)


def test_a_regression_with_an_empty_answer_says_so_in_junit_and_compare(
    gate_env, pytester, dataset, data_source, tmp_path, capsys
):
    from pytest_bfcl.testing.result_files import write_oracle_results

    _, before = gate_env
    results = tmp_path / "empty"
    write_oracle_results(results, dataset, "simple_python", dict.fromkeys(ids(range(30, 60)), ""))
    junit, after = tmp_path / "junit.xml", tmp_path / "after.json"
    result = _run(
        pytester, f"--bfcl-model=replay:{results}", f"--bfcl-baseline={before}",
        f"--bfcl-data={data_source.data_dir}", f"--junitxml={junit}",
        f"--bfcl-save-baseline={after}",
    )  # fmt: skip
    # 0..19 fixed and 30..59 worse: within the noise, so an expected failure that says so
    assert result.ret == 0, result.stdout.str()[-2000:]
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    text = cases["simple_python_30"].find("skipped").text.splitlines()
    assert f"  now:      {EMPTY_ANSWER}" in text
    assert not any(line.rstrip().endswith("now:") for line in text)
    # the baseline's answer beside it, as for any entry worse than the baseline
    assert any(ln.startswith('  baseline: [{"kinematics_final_velocity') for ln in text)
    # the saved run keeps the empty answer as it was; compare shows it as one
    assert BaselineAnswers.of(load_baseline(after)).get("simple_python_30") == ""
    assert compare_main([str(before), str(after), "--show", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("simple_python_30 [simple_python]")
    assert out[at + 1].startswith("  baseline: [{") and out[at + 2] == f"  now:      {EMPTY_ANSWER}"


class CutAnswers(Script):
    """Every chat completion stopped at the token limit, seven tokens into a call."""

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = super().completion(body)
        answer["choices"][0].update(
            message={"role": "assistant", "content": "calculate_area(base="},
            finish_reason="length",
        )
        answer["usage"] = {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17}
        return answer


def test_an_answer_cut_at_the_token_limit_is_marked_in_the_baseline_and_compare(
    pytester, dataset, data_source, tmp_path, capsys
):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI
    from pytest_bfcl.testing.recording_server import RecordingServer

    common = [f"--bfcl-data={data_source.data_dir}", "--bfcl-sample=4", "--bfcl-seed=1"]
    common += ["--bfcl-model=test-model", "--bfcl-max-tokens=7", "--bfcl-no-cache"]
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    # main's run answered right (the ground truth); this one is cut seven tokens in
    servers = (FakeOpenAI(dataset, ["simple_python"]), RecordingServer(CutAnswers()))
    for server_made, saved in zip(servers, (before, after), strict=True):
        with server_made as server:
            result = _run(
                pytester, f"--bfcl-base-url={server.base_url}", f"--bfcl-save-baseline={saved}",
                *common,
            )  # fmt: skip
        assert result.parseoutcomes().get("errors", 0) == 0, result.stdout.str()[-2000:]
    kept = BaselineAnswers.of(load_baseline(after))
    entry_id = next(iter(load_baseline(after).verdicts))
    assert (
        kept.get(entry_id) == "[cut at the token limit after 7 output tokens] calculate_area(base="
    )
    assert compare_main([str(before), str(after)]) == 0  # four entries: within the noise
    out = capsys.readouterr().out.splitlines()
    assert "worse now: 4" in out
    assert "  now:      [cut at the token limit after 7 output tokens] calculate_area(base=" in out
