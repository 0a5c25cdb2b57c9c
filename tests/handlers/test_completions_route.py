"""``--bfcl-leaderboard-model`` naming an open-weight entry asks ``/v1/completions`` as the
entry's handler does: the prompt its family renders, temperature 0.001, max_tokens from the
prompt's token count (the server's /tokenize, or --bfcl-tokenizer's tokenizer.json), and reads
the raw text with the handler's decoder; a local entry of another family is refused in one
line naming the families that work."""

from __future__ import annotations

import json
import re

import pytest

from pytest_bfcl.conformance.handler_cases import _entry
from pytest_bfcl.handlers import family_for
from pytest_bfcl.handlers.tokens import max_tokens_for
from pytest_bfcl.models.function_docs import with_language_hints
from pytest_bfcl.testing.completions_server import CompletionsServer

IDS = ("simple_python_0", "simple_python_1", "simple_python_2")


def _truth_answer(dataset, ids, form):
    """An answer function: the entry's ground truth, as Qwen's FC handler or as text."""
    answers = dataset.answers("simple_python")
    entries = [e for e in dataset.entries("simple_python") if e.id in ids]

    def answer(body):
        entry = next(e for e in entries if e.question[0][-1].content in body["prompt"])
        name, params = next(iter(answers[entry.id].ground_truth[0].items()))
        args = {k: v[0] for k, v in params.items() if v and v[0] != ""}
        if form == "glm":  # GLM's call: the name as its tools show it, then the arguments
            return f"{name.replace('.', '_')}\n{json.dumps(args)}"
        if form == "fc":
            call = json.dumps({"name": name, "arguments": args})
            return f"<think>\nEasy.\n</think>\n\n<tool_call>\n{call}\n</tool_call>"
        return f"[{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})]"

    return answer


def _question_asked(dataset, texts, body):
    """The messages and function docs of the entry a request asks."""
    entry = next(
        _entry(dataset, i)
        for i in IDS
        if _entry(dataset, i).question[0][-1].content in body["prompt"]
    )
    docs = with_language_hints(entry.function_sources(), entry.language, texts)
    return [m.model_dump() for m in entry.question[0]], docs


def _run(pytester, server, data_source, leaderboard_model, tmp_path, *extra):
    report = tmp_path / "report.json"
    result = pytester.runpytest_subprocess(
        "--bfcl-model=test-model",
        f"--bfcl-base-url={server.base_url}",
        f"--bfcl-leaderboard-model={leaderboard_model}",
        "--bfcl-category=simple_python",
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-no-cache",
        f"--bfcl-report={report}",
        *(f"bfcl/simple_python::{i}" for i in IDS),
        "-p",
        "no:cacheprovider",
        *extra,
    )
    return result, report


def test_qwen_fc_asks_completions_with_the_handlers_prompt_and_passes(
    pytester, dataset, data_source, texts, tmp_path
):
    with CompletionsServer(_truth_answer(dataset, IDS, "fc"), context=3000) as server:
        result, report = _run(pytester, server, data_source, "Qwen/Qwen3-8B-FC", tmp_path)
    out = result.stdout.str()
    assert result.parseoutcomes().get("passed") == len(IDS), out[-3000:]
    assert len(server.requests) == len(IDS)
    family = family_for("QwenFCHandler", data_source.unpacked_root, "Qwen/Qwen3-8B")
    for body in server.requests:
        assert body["prompt"] == family.render(*_question_asked(dataset, texts, body))
        assert body["temperature"] == 0.001
        words = len(body["prompt"].split())  # the fake server's token count
        assert body["max_tokens"] == max_tokens_for(words, 3000) < 4096
        assert "tools" not in body and "messages" not in body
    assert all(t["add_special_tokens"] is False for t in server.tokenized)
    meta = json.loads(report.read_text())["metadata"]
    assert meta["wire_format"] == "completions:qwen-fc"
    assert meta["model_info"]["handler"]["family"] == "qwen-fc"
    assert "asked on the completions route as its handler QwenFCHandler asks" in out


def test_glm_sends_its_stop_token_ids_and_its_prompt_and_passes(
    pytester, dataset, data_source, texts, tmp_path
):
    with CompletionsServer(_truth_answer(dataset, IDS, "glm"), context=3000) as server:
        result, report = _run(pytester, server, data_source, "THUDM/glm-4-9b-chat", tmp_path)
    assert result.parseoutcomes().get("passed") == len(IDS), result.stdout.str()[-3000:]
    family = family_for("GLMHandler", data_source.unpacked_root, "THUDM/glm-4-9b-chat")
    for body in server.requests:  # the question alone: no benchmark system prompt
        assert body["prompt"] == family.render(*_question_asked(dataset, texts, body))
        assert body["prompt"].startswith("[gMASK]<sop><|system|>")
        assert body["stop_token_ids"] == [151329, 151336, 151338]
    assert json.loads(report.read_text())["metadata"]["wire_format"] == "completions:glm"


def test_qwen_prompt_puts_the_benchmarks_system_prompt_first(
    pytester, dataset, data_source, tmp_path
):
    with CompletionsServer(_truth_answer(dataset, IDS, "prompt"), context=10) as server:
        result, _ = _run(pytester, server, data_source, "Qwen/Qwen3-8B", tmp_path)
    assert result.parseoutcomes().get("passed") == len(IDS), result.stdout.str()[-3000:]
    for body in server.requests:
        assert body["prompt"].startswith("<|im_start|>system\n")
        assert body["prompt"].endswith("<|im_start|>assistant\n")
        assert body["max_tokens"] == 1000  # the prompt fills the 10-token window


@pytest.mark.extra("handlers")
def test_a_tokenizer_folder_counts_the_prompt(pytester, dataset, data_source, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = tmp_path / "checkpoint"
    folder.mkdir()
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()  # words and punctuation apart
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 4000}))
    with CompletionsServer(_truth_answer(dataset, IDS, "fc")) as server:
        result, _ = _run(
            pytester, server, data_source, "Qwen/Qwen3-8B-FC", tmp_path,
            f"--bfcl-tokenizer={folder}",
        )  # fmt: skip
    assert result.parseoutcomes().get("passed") == len(IDS), result.stdout.str()[-3000:]
    assert server.tokenized == []  # counted here, not by the server
    for body in server.requests:
        count = len(tokenizer.encode(body["prompt"], add_special_tokens=False).ids)
        assert body["max_tokens"] == max_tokens_for(count, 4000)


def _unreproduced_entry(data_source):
    """A local entry whose handler no family reproduces (skip once every one is)."""
    from pytest_bfcl.dataset.registry import load_model_registry
    from pytest_bfcl.handlers import family_class

    for model in load_model_registry(data_source.unpacked_root).values():
        if model.wire_format == "completions" and family_class(model.handler) is None:
            return model
    pytest.skip("every open-weight handler of the pinned release is reproduced")


def test_an_open_weight_entry_of_another_family_is_refused_in_one_line(pytester, data_source):
    model = _unreproduced_entry(data_source)
    result = pytester.runpytest(
        "--bfcl-model=test-model", "--bfcl-base-url=http://127.0.0.1:9/v1",
        f"--bfcl-leaderboard-model={model.name}", f"--bfcl-data={data_source.data_dir}",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{model.handler} is not reproduced" in err and "QwenFCHandler" in err
    assert "--bfcl-wire-format=chat-completions" in err
    assert "Traceback" not in err


def test_max_tokens_rule():
    assert max_tokens_for(100, 40960) == 4096
    assert max_tokens_for(100, 1000) == 898
    assert max_tokens_for(999, 1000) == 1000  # no room: the handlers ask 1000 anyway
    assert max_tokens_for(998, 1000) == 0


def test_mistral_feeds_each_result_back_under_the_id_its_call_was_shown_with(
    pytester, data_source, tmp_path
):
    call = '[{"name": "ls", "arguments": {"a": true}}, {"name": "pwd", "arguments": {}}]'

    def answer(body):
        return "Done." if body["prompt"].endswith("[/TOOL_RESULTS]") else call

    with CompletionsServer(answer) as server:
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model", f"--bfcl-base-url={server.base_url}",
            "--bfcl-leaderboard-model=mistralai/Ministral-8B-Instruct-2410",
            "--bfcl-category=multi_turn_base", f"--bfcl-data={data_source.data_dir}",
            "--bfcl-no-cache", "bfcl/multi_turn_base::multi_turn_base_0", "-p", "no:cacheprovider",
        )  # fmt: skip
    assert result.ret in (0, 1), result.stdout.str()[-3000:]  # scored, right or wrong
    after_results = [b["prompt"] for b in server.requests if "[TOOL_RESULTS]" in b["prompt"]]
    assert after_results
    for prompt in after_results:
        shown = re.findall(r'"id": "(\w{9})"', prompt)
        fed_back = re.findall(r'"call_id": "(\w{9})"', prompt)
        assert len(fed_back) == len(shown) >= 2 and fed_back == shown
