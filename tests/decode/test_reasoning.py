"""Reasoning text of thinking models: kept apart from the answer, as the leaderboard's handlers
keep it per family (a field of its own, or ``<think>`` blocks cut out of the text), stored in
results and reports, and never decoded as calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_bfcl.check.single_turn import evaluate_single_turn
from pytest_bfcl.decode.reasoning import (
    THINK_TAG_PARSERS,
    apply_reasoning_mode,
    joined_reasoning,
    reasoning_mode_of,
    split_think,
)
from pytest_bfcl.models.base import Task
from pytest_bfcl.models.endpoint_response import completion_record
from pytest_bfcl.models.oracle import OracleModel
from pytest_bfcl.scoring import ScoringOptions
from pytest_bfcl.testing.fake_openai import FakeOpenAI

PROMPT = ScoringOptions("prompt", False)
# A call written while thinking: it names a function of no entry, so if it were decoded the
# entry would fail (or, for irrelevance, count as a call).
DECOY = "[decoy_function(x=1)]"


# -- splitting ---------------------------------------------------------------------------------


def test_a_closed_block_is_reasoning_and_the_rest_is_the_answer():
    answer, reasoning = split_think(f"<think>\nI could call {DECOY}.\n</think>\n\n[f(a=1)]")
    assert answer == "[f(a=1)]"
    assert reasoning == f"I could call {DECOY}."


def test_several_blocks_cut_at_the_last_close_and_keep_all_reasoning():
    text = "<think>first</think>draft [g(b=2)]<think>second</think>\n[f(a=1)]"
    answer, reasoning = split_think(text)
    assert answer == "[f(a=1)]"
    assert "first" in reasoning and "second" in reasoning and "[g(b=2)]" in reasoning


def test_a_block_opened_by_the_template_needs_no_opening_tag():
    # DeepSeek-R1's chat template ends the prompt with "<think>\n": the answer has only the close.
    assert split_think("thinking...\n</think>\n[f(a=1)]") == ("[f(a=1)]", "thinking...")


def test_an_unclosed_block_leaves_the_text_whole():
    text = f"<think>\nI should call {DECOY} but I ran out of tok"
    assert split_think(text) == (text, "")


def test_field_mode_leaves_the_text_and_think_tags_moves_it():
    record = {"result": "<think>hm</think>[f(a=1)]", "reasoning": "from the server"}
    assert apply_reasoning_mode(record, "field") is record
    split = apply_reasoning_mode(record, "think-tags")
    assert split["result"] == "[f(a=1)]"
    assert split["reasoning"] == "from the server\n\nhm"
    assert record["result"] == "<think>hm</think>[f(a=1)]"  # the cached record is not changed


def test_tool_calls_are_never_touched():
    record = {"result": [{"f": '{"a": "</think>"}'}], "reasoning": None}
    assert apply_reasoning_mode(record, "think-tags") is record


def test_stored_reasoning_reads_as_one_text():
    assert joined_reasoning("why") == "why"
    assert joined_reasoning([["a", ""], [], ["b"]]) == "a\nb"
    assert joined_reasoning([[None, 3, "c"]]) == "c"
    assert joined_reasoning("") is None and joined_reasoning({"x": 1}) is None
    deep: list = ["d"]
    for _ in range(5000):  # deeper than recursion allows
        deep = [deep]
    assert joined_reasoning(deep) == "d"


# -- decoding: reasoning never counts as calls -------------------------------------------------


def _oracle_text(dataset, category: str, index: int = 0) -> tuple[Task, str]:
    entry = dataset.entries(category)[index]
    task = Task(entry, dataset.answers(category).get(entry.id))
    return task, OracleModel(PROMPT).generate(task).result


def _verdict(task: Task, text: str, mode: str):
    record = apply_reasoning_mode({"result": text, "reasoning": None}, mode)
    return evaluate_single_turn(task.entry, task.answer, record["result"], PROMPT)


def test_the_answer_after_the_block_is_decoded(dataset):
    task, answer = _oracle_text(dataset, "simple_python")
    text = f"<think>\nMaybe {DECOY}? No.\n</think>\n\n{answer}"
    assert _verdict(task, text, "think-tags").valid
    # Without the split the leaderboard's OpenAI-compatible handlers decode the whole text;
    # the block makes it unreadable, and the decoy is not taken for a call either.
    kept = _verdict(task, text, "field")
    assert not kept.valid
    assert "decoy_function" not in json.dumps(kept.decoded)


def test_calls_only_inside_the_block_do_not_count(dataset):
    task, answer = _oracle_text(dataset, "simple_python")
    verdict = _verdict(task, f"<think>{answer}</think>\nI cannot answer this.", "think-tags")
    assert not verdict.valid
    irrelevance, _ = _oracle_text(dataset, "irrelevance")
    # an irrelevance entry passes when no call is made: the call inside the block is none
    text = f"<think>{DECOY}</think>\nNone of the functions fit."
    assert _verdict(irrelevance, text, "think-tags").valid


def test_an_unclosed_block_fails_even_with_the_right_call_inside(dataset):
    task, answer = _oracle_text(dataset, "simple_python")
    text = f"<think>\nThe call is {answer}"
    for mode in ("field", "think-tags"):
        assert not _verdict(task, text, mode).valid


# -- the endpoint's record ---------------------------------------------------------------------


def _body(message: dict) -> bytes:
    return json.dumps(
        {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": {}}
    ).encode()


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_fc_keeps_the_reasoning_field_beside_the_tool_calls(field):
    call = {"id": "c0", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    message = {"role": "assistant", "content": None, "tool_calls": [call], field: "think [g()]"}
    record = completion_record(_body(message), 0.5)
    assert record["result"] == [{"f": '{"a": 1}'}]
    assert record["reasoning"] == "think [g()]"
    assert apply_reasoning_mode(record, "think-tags")["result"] == [{"f": '{"a": 1}'}]


def test_a_reasoning_field_that_is_not_text_is_kept_as_text():
    message = {"role": "assistant", "content": "[f(a=1)]", "reasoning_content": [{"f": {}}]}
    record = completion_record(_body(message), 0.5)
    assert record["reasoning"] == '[{"f": {}}]' and record["result"] == "[f(a=1)]"


# -- the leaderboard's families ----------------------------------------------------------------


@pytest.fixture(scope="module")
def registry(data_source):
    from pytest_bfcl.dataset.registry import load_model_registry

    return load_model_registry(data_source.unpacked_root)


@pytest.mark.parametrize(
    ("name", "parser", "mode"),
    [
        ("Qwen/Qwen3-8B", "QwenHandler", "think-tags"),  # local, prompting
        ("Qwen/Qwen3-8B-FC", "QwenFCHandler", "think-tags"),  # local: parsed as text
        ("deepseek-ai/DeepSeek-R1", "DeepseekReasoningHandler", "think-tags"),
        ("meta-llama/Llama-3.1-8B-Instruct", "OSSHandler", "field"),
        ("gpt-4.1-2025-04-14-FC", "OpenAIResponsesHandler", "field"),
        ("qwen3-4b-think-FC", "QwenAgentThinkHandler", "field"),  # an API: content as sent
    ],
)
def test_the_registry_says_which_handler_parses_responses(registry, name, parser, mode):
    model = registry[name]
    assert model.response_parser == parser
    assert reasoning_mode_of(model.response_parser) == mode


def test_every_think_tag_parser_exists_in_the_pinned_release(registry):
    parsers = {model.response_parser for model in registry.values()}
    assert THINK_TAG_PARSERS.issubset(parsers)


def test_the_leaderboard_model_picks_the_reasoning_mode(data_source):
    from pytest_bfcl.run.leaderboard import as_leaderboard_scores
    from pytest_bfcl.settings import build_settings

    def applied(**values):
        settings = build_settings({"model": "oracle", **values})
        return as_leaderboard_scores(settings, data_source)

    assert applied(leaderboard_model="Qwen/Qwen3-8B").reasoning == "think-tags"
    assert applied(leaderboard_model="gpt-4.1-2025-04-14").reasoning == "field"
    given = applied(leaderboard_model="Qwen/Qwen3-8B", reasoning="field")
    assert given.reasoning == "field"  # an explicit option wins


def test_a_bad_reasoning_value_names_the_option():
    from pytest_bfcl.settings import build_settings

    with pytest.raises(ValueError, match=r"--bfcl-reasoning must be one of field, think-tags"):
        build_settings({"model": "oracle", "reasoning": "think"})
    assert build_settings({"model": "oracle", "reasoning": "Think-Tags"}).reasoning == "think-tags"


# -- end to end: an endpoint that thinks aloud --------------------------------------------------

# A project's response transform makes the oracle's server answer as a thinking model does:
# reasoning in a <think> block (with a decoy call) before the answer, and a separate field.
THINKING_CONFTEST = f"""
import json, os

def pytest_bfcl_transform_response(record, model):
    if isinstance(record["result"], str):
        record["result"] = "<think>\\nPerhaps {DECOY}.\\n</think>\\n\\n" + record["result"]
    record["reasoning"] = "server-side thoughts"

def pytest_bfcl_transform_request(request, model):
    sent = [m.get("content") for m in request["messages"] if m.get("role") == "assistant"]
    if any("<think>" in str(c) for c in sent):
        with open(os.environ["THINK_SENT_BACK"], "a") as fh:
            fh.write(json.dumps(sent) + "\\n")
"""


def _run(pytester, fake, tmp_path: Path, category: str, *extra: str):
    return pytester.runpytest(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={fake.base_url}",
        f"--bfcl-category={category}",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        "--bfcl-mode=prompt",
        "-p",
        "no:cacheprovider",
        *extra,
    )


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_single_turn_think_tags_results_and_replay(pytester, dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("THINK_SENT_BACK", str(tmp_path / "sent"))
    pytester.makeconftest(THINKING_CONFTEST)
    cats = "live_parallel,live_relevance"  # 32 entries, each needing a call
    with FakeOpenAI(dataset, cats.split(","), mode="prompt") as fake:
        kept = _run(pytester, fake, tmp_path, cats)
        asked = fake.total_requests()
        # Decoded whole, as the OpenAI-compatible handlers do: the block makes every answer
        # unreadable, and the decoy inside it is no call either.
        kept.assert_outcomes(failed=32)
        results, html = tmp_path / "results", tmp_path / "r.html"
        split = _run(
            pytester, fake, tmp_path, cats, "--bfcl-reasoning=think-tags",
            f"--bfcl-results-dir={results}", f"--bfcl-html={html}",
        )  # fmt: skip
        split.assert_outcomes(passed=32)
        assert fake.total_requests() == asked  # the cache holds answers as the server sent them
    records = [r for p in sorted(results.rglob("*_result.json")) for r in _records(p)]
    assert len(records) == 32
    for record in records:
        assert "<think>" not in record["result"] and "decoy_function" not in record["result"]
        assert record["reasoning_content"] == f"server-side thoughts\n\nPerhaps {DECOY}."
    assert "Perhaps [decoy_function(x=1)]" in html.read_text(encoding="utf-8")

    html2 = tmp_path / "replayed.html"
    replayed = pytester.runpytest(
        f"--bfcl-model=replay:{results}", f"--bfcl-category={cats}",
        "--bfcl-mode=prompt", f"--bfcl-html={html2}", "-p", "no:cacheprovider",
    )  # fmt: skip
    replayed.assert_outcomes(passed=32)
    assert "Perhaps [decoy_function(x=1)]" in html2.read_text(encoding="utf-8")


def test_multi_turn_steps_keep_reasoning_per_step(pytester, dataset, tmp_path, monkeypatch):
    sent_back = tmp_path / "sent"
    monkeypatch.setenv("THINK_SENT_BACK", str(sent_back))
    pytester.makeconftest(THINKING_CONFTEST)
    results, report = tmp_path / "results", tmp_path / "r.json"
    with FakeOpenAI(dataset, ["multi_turn_base"], mode="prompt") as fake:
        run = _run(
            pytester, fake, tmp_path, "multi_turn_base", "--bfcl-sample=3",
            "--bfcl-reasoning=think-tags", f"--bfcl-results-dir={results}",
            f"--bfcl-report={report}",
        )  # fmt: skip
        run.assert_outcomes(passed=3)
    assert not sent_back.exists()  # the history holds answers without their <think> blocks
    assert json.loads(report.read_text())["metadata"]["reasoning"] == "think-tags"
    (path,) = results.rglob("BFCL_v4_multi_turn_base_result.json")
    records = _records(path)
    assert len(records) == 3
    for record in records:
        reasoning, result = record["reasoning_content"], record["result"]
        # per turn, per step, like the results themselves
        assert [len(turn) for turn in reasoning] == [len(turn) for turn in result]
        assert all(text.endswith(f"Perhaps {DECOY}.") for turn in reasoning for text in turn)
        steps = [s for turn in record["inference_log"] for k, s in turn.items() if "step" in k]
        assert all(step[0]["reasoning_content"] for step in steps)
        assert not any("<think>" in str(step[0]["content"]) for step in steps)

    replayed = pytester.runpytest(
        f"--bfcl-model=replay:{results}", "--bfcl-category=multi_turn_base", "--bfcl-sample=3",
        "--bfcl-mode=prompt", "-p", "no:cacheprovider",
    )  # fmt: skip
    replayed.assert_outcomes(passed=3)
