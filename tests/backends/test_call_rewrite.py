"""The leaderboard's call-string rewrite, reproduced in conversations: what memory stores and
shows the model, the option that keeps texts as written, and how that run is marked."""

from __future__ import annotations

import ast
from typing import Any

from pytest_bfcl.backends.execute import _CALLED_NAME, Environment, instance_name, rewritten_call
from pytest_bfcl.dataset.models import Entry
from pytest_bfcl.gate.baseline import Baseline, stamp_differences
from pytest_bfcl.models.base import StepReply, StepRequest, Task
from pytest_bfcl.report.render import not_comparable_lines
from pytest_bfcl.run.conversation import Conversation
from pytest_bfcl.run.leaderboard import deviations
from pytest_bfcl.settings import Settings

UTILS = "bfcl_eval/eval_checker/multi_turn_eval/multi_turn_utils.py"


def _reference_function(root, name: str) -> ast.FunctionDef:
    tree = ast.parse((root / UTILS).read_text(encoding="utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_the_pattern_is_the_reference_one(data_source):
    method = _reference_function(data_source.unpacked_root, "_process_method_calls")
    patterns = [
        node.value.value
        for node in ast.walk(method)
        if isinstance(node, ast.Assign)
        and ast.unparse(node.targets[0]) == "pattern"
        and isinstance(node.value, ast.Constant)
    ]
    assert patterns == [_CALLED_NAME.pattern]


def test_instance_names_are_built_as_the_reference_builds_them(data_source):
    source = ast.unparse(
        _reference_function(data_source.unpacked_root, "execute_multi_turn_func_call")
    )
    assert "f'{model_name}_{test_entry_id}_{class_name}_instance'" in source
    assert "re.sub('[-./:]', '_', instance_name)" in source
    name = instance_name("openbmb/MiniCPM-SALA-FC", "memory_kv_prereq_0-customer-0", "MemoryAPI_kv")
    assert name == "openbmb_MiniCPM_SALA_FC_memory_kv_prereq_0_customer_0_MemoryAPI_kv_instance"


def test_the_rewrite_drops_spaces_before_parentheses_and_prefixes_tools_even_in_texts():
    owners = {"memory_append": "I"}
    call = "memory_append(text='course (CS 101) and memory_append (x) and f (y)')"
    assert rewritten_call(call, owners) == (
        "I.memory_append(text='course(CS 101) and I.memory_append(x) and f(y)')"
    )


def _kv(rewrite: bool) -> Environment:
    config = {"MemoryAPI_kv": {"snapshot": None}}
    rewrite_for = ("org/model-1.5", "memory_kv_0-customer-0") if rewrite else None
    return Environment.create(["MemoryAPI_kv"], config, rewrite_for=rewrite_for)


def test_memory_stores_the_rewritten_text_by_default_and_the_written_one_on_request():
    call = "core_memory_add(key='course', value='Enrolled in course (CS 101)')"
    stored = {}
    for rewrite in (True, False):
        env = _kv(rewrite)
        assert env.execute_one(call) == '{"status": "Key-value pair added."}'
        stored[rewrite] = env.execute_one("core_memory_retrieve(key='course')")
    assert "course(CS 101)" in stored[True]
    assert "course (CS 101)" in stored[False]


def test_rewritten_calls_still_reach_only_the_entrys_tools():
    env = _kv(True)
    assert env.execute_one("nothing (1)") == "Error during execution: name 'nothing' is not defined"
    # the instance's name written by the model is not a way around the tool set
    result = env.execute_one("org_model_1_5_memory_kv_0_customer_0_MemoryAPI_kv_instance._dump()")
    assert result.startswith("Error during execution:")
    assert (
        env.execute_one("exit (0)") == "Error during execution: Function call exit is not allowed."
    )


class _OneCall:
    """Stores a text with a space before a parenthesis, then ends its turn."""

    def __init__(self) -> None:
        self.requests: list[StepRequest] = []

    def step(self, request: StepRequest) -> StepReply:
        self.requests.append(request)
        if len(self.requests) == 1:
            args = '{"text": "Likes course (CS 101)"}'
            return StepReply(result=[{"memory_append": args}], tool_call_ids=["c"])
        return StepReply(result="done")


def _memory_conversation(texts, rewrite_model: str | None) -> Conversation:
    entry = Entry(
        id="memory_rec_sum_prereq_0-student-0",
        question=[[{"role": "user", "content": "remember"}]],
        involved_classes=["MemoryAPI_rec_sum"],
        scenario="customer",
        initial_config={"MemoryAPI_rec_sum": {"snapshot": None}},
    )
    return Conversation(Task(entry, None), _OneCall(), "fc", texts, rewrite_model=rewrite_model)


def test_conversations_rewrite_unless_told_not_to(texts):
    rewritten = _memory_conversation(texts, "some-model")
    rewritten.run()
    written = _memory_conversation(texts, None)
    written.run()
    assert rewritten.memory_backend()._context_dump().count("course(CS 101)") == 1  # type: ignore[union-attr]
    assert written.memory_backend()._context_dump().count("course (CS 101)") == 1  # type: ignore[union-attr]


def _baseline(metadata: dict[str, Any]) -> Baseline:
    return Baseline(metadata=metadata, verdicts={})


def test_the_corrected_run_is_marked_not_comparable_in_reports_and_stamp():
    fixed = deviations(Settings(model="m", exact_call_text=True))
    assert deviations(Settings(model="m")) == []
    assert len(fixed) == 1 and "--bfcl-exact-call-text" in fixed[0]
    line = not_comparable_lines({"leaderboard_deviations": fixed})[0]
    assert line.startswith("--bfcl-exact-call-text")
    assert line.endswith("scores not comparable to the leaderboard")
    assert not_comparable_lines({"leaderboard_deviations": []}) == []
    refused = stamp_differences(_baseline({}), {"leaderboard_deviations": fixed})
    assert any("deviations from the leaderboard differ" in p for p in refused)
    same = stamp_differences(
        _baseline({"leaderboard_deviations": fixed}), {"leaderboard_deviations": fixed}
    )
    assert not any("deviations" in p for p in same)


def test_a_run_with_exact_call_text_says_so_in_the_terminal_and_the_html_page(
    pytester, data_source, tmp_path
):
    html = tmp_path / "report.html"
    result = pytester.runpytest(
        "--bfcl-model=oracle",
        "--bfcl-category=multi_turn_base",
        "--bfcl-sample=2",
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-exact-call-text",
        f"--bfcl-html={html}",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["--bfcl-exact-call-text *: scores not comparable to the leaderboard"]
    )
    assert "not comparable to the leaderboard" in html.read_text(encoding="utf-8")
