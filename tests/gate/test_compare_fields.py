"""What a stored run supplies to the compare tool is data: its fields (model, identity, time,
entry ids, answers) are printed escaped, masked and bounded; a lone surrogate anywhere is one
line and exit status 2 at worst, never a traceback; the page's answer marks are bounded in
time; and the exit status says the drop even when the page cannot be written."""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from pytest_bfcl.compare import EXIT_BAD_INPUT, EXIT_DROP, EXIT_PASSED, comparison_record, main
from pytest_bfcl.gate import ANSWER_LIMIT, baseline_data
from pytest_bfcl.redact import forget_registered_secrets
from pytest_bfcl.report.html.answer_diff import MAX_TOKENS, DiffBudget, marked_difference

IDS = [f"simple_python_{n}" for n in range(40)]
META = {"model": "m", "mode": "fc", "categories": ["simple_python"], "dataset": {}}


@pytest.fixture(autouse=True)
def fresh_registry():
    forget_registered_secrets()
    yield
    forget_registered_secrets()


def packed(answers: dict[str, str]) -> dict[str, object]:
    """An answers field as an edited (unsigned) baseline may hold it: any text, any length."""
    payload = json.dumps(answers).encode("utf-8", "surrogatepass")
    return {
        "encoding": "gzip+base64",
        "entries": len(answers),
        "left_out": 0,
        "answer_limit": ANSWER_LIMIT,
        "data": base64.b64encode(zlib.compress(payload, 9, wbits=31)).decode("ascii"),
    }


def write(path, valid: bool, meta=None, answers=None):
    data = baseline_data(dict.fromkeys(IDS, valid), {**META, **(meta or {})}, {})
    if answers is not None:
        data["answers"] = packed(answers)
    path.write_text(json.dumps(data))
    return str(path)


FORGED = "\x1b[2J\rcompare: passed\n\u202egnissap"


@pytest.mark.parametrize("field", ["model", "model_revision", "finished_at"])
def test_control_and_bidi_characters_in_a_runs_fields_are_escaped(tmp_path, capsys, field):
    before = write(tmp_path / "b.json", True)
    after = write(tmp_path / "a.json", False, {field: FORGED})
    assert main([before, after]) == EXIT_DROP
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert out.count("compare: passed") == 1  # the forged one is inside an escaped field
    assert out.splitlines()[-1] == "compare: FAILED"
    assert "\\u001b[2J\\u000dcompare: passed\\u000a\\u202egnissap" in out


def test_a_long_field_is_bounded(tmp_path, capsys):
    before = write(tmp_path / "b.json", True)
    after = write(tmp_path / "a.json", True, {"model": "m" * 300_000})
    assert main([before, after]) == EXIT_PASSED
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) < 700


@pytest.mark.parametrize("where", ["answers", "model", "finished_at"])
def test_a_lone_surrogate_is_one_line_never_a_traceback(tmp_path, capsys, where):
    answers = dict.fromkeys(IDS, "[{'f': 'x'}]")
    meta = {}
    if where == "answers":
        answers[IDS[3]] = "call \ud800 here"
    else:
        meta[where] = "m\udfff"
    before = write(tmp_path / "b.json", True, answers=answers)
    after = write(tmp_path / "a.json", False, meta, answers=answers)
    page = tmp_path / "page.html"
    code = main([before, after, "--show=40", f"--html={page}"])
    out, err = capsys.readouterr()
    assert code == EXIT_DROP and err == ""
    assert "\\ud800" in out or "\\udfff" in out
    assert page.read_text(encoding="utf-8")  # the page was written, as UTF-8


def test_a_surrogate_the_tool_cannot_read_is_status_2_in_one_line(tmp_path, capsys):
    path = tmp_path / "b.json"
    path.write_bytes(b'{"verdicts": {"simple_python_0": true}, "x": "\xed\xa0\x80"}')
    assert main([str(path), str(path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.startswith("compare: ") and "\n" not in err and "Traceback" not in err


def test_answers_on_the_page_are_cut_and_their_marks_bounded():
    long_before, long_after = "1, " * 30_000, "2, " * 30_000
    record = comparison_record("simple_python_0", "simple_python", True, False,
                               long_before, long_after, DiffBudget())  # fmt: skip
    assert len(record.baseline_answer or "") <= ANSWER_LIMIT
    assert len(record.answer or "") <= ANSWER_LIMIT
    assert record.answer_diff is not None
    spent = comparison_record("simple_python_0", "simple_python", True, False,
                              "a b", "a c", DiffBudget(0))  # fmt: skip
    assert spent.answer_diff is None and spent.answer == "a c"  # shown, not marked


def test_a_long_differing_middle_is_marked_as_one_run_each_way():
    before = "call(" + " ".join(str(n) for n in range(MAX_TOKENS)) + ") end"
    after = "call(" + " ".join(str(n * 7 + 1) for n in range(MAX_TOKENS)) + ") end"
    runs = marked_difference(before, after)
    assert runs[0] == ["=", "call("] and runs[-1] == ["=", ") end"]
    assert [op for op, _ in runs] == ["=", "-", "+", "="]
    assert "".join(t for op, t in runs if op != "+") == before
    assert "".join(t for op, t in runs if op != "-") == after


def test_a_short_difference_is_still_marked_word_by_word():
    runs = marked_difference("f(city='Paris', unit='c')", "f(city='Rome', unit='c')")
    assert ["-", "Paris"] in runs and ["+", "Rome"] in runs


def test_the_drop_is_the_status_when_the_page_cannot_be_written(tmp_path, capsys):
    before = write(tmp_path / "b.json", True)
    after = write(tmp_path / "a.json", False)
    (tmp_path / "dir").mkdir()
    assert main([before, after, f"--html={tmp_path / 'dir'}"]) == EXIT_DROP
    assert main([before, before, f"--html={tmp_path / 'dir'}"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("cannot write the HTML report" in line for line in err)


def test_a_key_in_a_stored_answer_is_masked(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789abcdefghij")
    answers = dict.fromkeys(IDS, "Authorization: Bearer sk-live-0123456789abcdefghij")
    before = write(tmp_path / "b.json", True, answers=answers)
    after = write(tmp_path / "a.json", False, answers=answers)
    page = tmp_path / "page.html"
    assert main([before, after, "--show=2", f"--html={page}"]) == EXIT_DROP
    out = capsys.readouterr().out
    assert "Bearer ***" in out and "0123456789" not in out
    assert "0123456789" not in page.read_text()


def test_merged_baselines_with_a_lone_surrogate_compare_in_lines(tmp_path, capsys):
    from pytest_bfcl.merge_baselines import main as merge

    answers = dict.fromkeys(IDS, "call \ud800 here")
    one = write(tmp_path / "one.json", True, {"run_id": "one"}, answers=answers)
    two = write(tmp_path / "two.json", True, {"run_id": "two"}, answers=answers)
    merged = tmp_path / "merged.json"
    assert merge([str(merged), one, two]) == 0
    after = write(tmp_path / "a.json", False, answers=answers)
    assert main([str(merged), after, "--show=1"]) == EXIT_DROP
    out, err = capsys.readouterr()
    assert "call \\ud800 here" in out and "Traceback" not in err


def test_a_merge_refusal_is_one_escaped_line(tmp_path, capsys):
    from pytest_bfcl.merge_baselines import main as merge

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "\x1b[2J" + "f" * 100_000}))
    assert merge([str(tmp_path / "out.json"), str(bad), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and len(err) <= 1001
