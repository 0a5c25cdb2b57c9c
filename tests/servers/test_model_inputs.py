"""The answer comes from the model that is asked: the response cache knows a model by its
revision (``--bfcl-model-revision`` or ``$BFCL_MODEL_REVISION``) and a started server by the
content of every file its command or vLLM flags name (a checkpoint replaced at the same path, a
chat template edited in place), and the reports list those inputs with their digests."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pytest_bfcl.servers.serving_inputs import (
    MAX_FOLDER_FILES,
    TOO_LARGE,
    content_digest,
    identity_lines,
    input_digests,
    named_paths,
    served_identity,
)
from pytest_bfcl.testing.fake_openai import FakeOpenAI
from pytest_bfcl.testing.stand_in_vllm import starts_recorded

STAND_IN = f"{sys.executable} -m pytest_bfcl.testing.stand_in_vllm"


def test_words_naming_files_or_folders_are_the_inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chat.jinja").write_text("{{ messages }}")
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{}")
    words = ["serve", "--port", "{port}", "--chat-template", "chat.jinja",
             "--lora-modules=./adapter", "--host", "127.0.0.1", "chat.jinja"]  # fmt: skip
    assert named_paths(words) == ["chat.jinja", "./adapter"]
    digests = input_digests(words)
    assert set(digests) == {"chat.jinja", "./adapter"}
    assert all(len(d) == 16 for d in digests.values())


def test_a_file_edited_in_place_with_its_size_and_time_kept_has_another_digest(tmp_path):
    template = tmp_path / "chat.jinja"
    template.write_text("{{ messages }}")
    before, stat = content_digest(template), template.stat()
    template.write_text("{{ massages }}")
    os.utime(template, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert content_digest(template) != before


def test_a_folder_too_large_to_be_a_model_input_is_known_by_its_path(tmp_path, monkeypatch):
    monkeypatch.setattr("pytest_bfcl.servers.serving_inputs.MAX_FOLDER_FILES", 3)
    for i in range(4):
        (tmp_path / f"f{i}").write_text("x")
    assert MAX_FOLDER_FILES > 3 and content_digest(tmp_path) == TOO_LARGE


def test_the_identity_holds_the_inputs_and_the_revision_and_nothing_new_without_them():
    assert served_identity("", {}, "", "") == ""
    assert served_identity("", {}, "", "extra") == "extra"  # as before: cached answers keep
    assert served_identity("vllm:x --a", {}, "", "") == "vllm:x --a"
    both = served_identity("server:cmd", {"t.jinja": "ab"}, "c0ffee", "")
    assert both == "server:cmd inputs: t.jinja@ab revision: c0ffee"


def test_the_header_says_what_the_cache_knows_a_model_by():
    remote = {"kind": "openai-compatible", "served_model": "acme"}
    [trusted] = identity_lines(remote, "", cached=True)
    assert "trusted by its name" in trusted and "--bfcl-model-revision" in trusted
    assert identity_lines(remote, "", cached=False) == []
    [named] = identity_lines(remote, "abc123", cached=True)
    assert named.startswith("model revision: abc123")
    started = {"kind": "vllm", "inputs": {"chat.jinja": "0123"}}
    assert identity_lines(started, "", cached=True) == ["model inputs: chat.jinja (0123)"]


def _endpoint_run(pytester, url: str, cache: Path, report: Path, *extra: str):
    return pytester.runpytest_subprocess(
        "--bfcl-model=test-model", f"--bfcl-base-url={url}", "--bfcl-category=live_relevance",
        f"--bfcl-cache-dir={cache}", f"--bfcl-report={report}", "-p", "no:cacheprovider",
        *extra, timeout=300,
    )  # fmt: skip


def test_another_revision_of_an_endpoint_s_model_is_asked_again(pytester, dataset, tmp_path):
    cache, report = tmp_path / "cache", tmp_path / "report.json"
    asked = []
    for revision in ("main-sha", "main-sha", "pr-sha"):
        with FakeOpenAI(dataset, ["live_relevance"]) as server:
            os.environ["BFCL_MODEL_REVISION"] = revision
            try:
                result = _endpoint_run(pytester, server.base_url, cache, report)
            finally:
                del os.environ["BFCL_MODEL_REVISION"]
            asked.append(server.total_requests())
        assert result.ret == 0, result.stdout.str()[-2000:]
        assert f"model revision: {revision}" in result.stdout.str()
    assert asked == [16, 0, 16]
    assert json.loads(report.read_text())["metadata"]["model_revision"] == "pr-sha"


def test_without_a_revision_the_header_says_answers_are_trusted_by_name(
    pytester, dataset, tmp_path
):
    with FakeOpenAI(dataset, ["live_relevance"]) as server:
        result = _endpoint_run(pytester, server.base_url, tmp_path / "c", tmp_path / "r.json")
    assert result.ret == 0
    lines = [line for line in result.stdout.lines if "trusted by its name" in line]
    assert len(lines) == 1 and "$BFCL_MODEL_REVISION" in lines[0]


def test_a_chat_template_edited_in_place_asks_vllm_again(pytester, stand_in, tmp_path):
    template = pytester.path / "chat.jinja"
    template.write_text("{{ messages }}")
    report = tmp_path / "report.json"

    def run():
        return pytester.runpytest(
            "--bfcl-model=vllm:test-model", f"--bfcl-vllm-exe={STAND_IN}",
            "--bfcl-vllm-args=--tool-call-parser hermes --chat-template chat.jinja",
            "--bfcl-category=live_parallel", f"--bfcl-cache-dir={tmp_path / 'cache'}",
            f"--bfcl-report={report}", "--bfcl-retries=1", "-p", "no:cacheprovider",
            f"--bfcl-save-baseline={tmp_path / 'baseline.json'}",
        )  # fmt: skip

    run().assert_outcomes(passed=16)
    again = run()
    again.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 1  # unchanged: answered from the cache
    first = json.loads(report.read_text())["metadata"]["model_info"]["inputs"]
    stat = template.stat()
    template.write_text("{{ massages }}")  # same path, same size, same time
    os.utime(template, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    edited = run()
    edited.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 2
    now = json.loads(report.read_text())["metadata"]["model_info"]["inputs"]
    assert set(first) == set(now) == {"chat.jinja"} and first != now
    assert f"model inputs: chat.jinja ({now['chat.jinja']})" in edited.stdout.str()
    stamp = json.loads((tmp_path / "baseline.json").read_text())["metadata"]
    assert stamp["model_info"]["inputs"] == now  # the baseline says what it was recorded with


def test_a_server_command_s_checkpoint_replaced_at_its_path_is_asked_again(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.setenv("STANDIN_MODE", "prompt")
    folder = pytester.path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "qwen2"}')
    command = (
        f"{STAND_IN} serve ckpt --served-model-name test-model --host 127.0.0.1 --port {{port}}"
    )
    report = tmp_path / "report.json"

    def run():
        result = pytester.runpytest(
            "--bfcl-model=test-model", "--bfcl-mode=prompt", f"--bfcl-server-cmd={command}",
            "--bfcl-category=live_parallel", f"--bfcl-cache-dir={tmp_path / 'cache'}",
            f"--bfcl-report={report}", "--bfcl-retries=1", "-p", "no:cacheprovider",
        )  # fmt: skip
        result.assert_outcomes(passed=16)
        usage = json.loads(report.read_text())["usage"]
        return usage["model_queries"] - (usage.get("cached_queries") or 0)

    assert run() == 16
    assert run() == 0  # the same checkpoint: from the cache
    (folder / "config.json").write_text('{"model_type": "qwen3"}')  # replaced in place
    assert run() == 16
    info = json.loads(report.read_text())["metadata"]["model_info"]
    assert list(info["inputs"])[-1] == "ckpt"  # after the program, a path too
