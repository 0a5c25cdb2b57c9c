"""Real vLLM in the loop, on a CPU: ``--bfcl-model=vllm:`` starts the vLLM CPU build through its
own ``vllm`` command, waits for it, scores entries in function-calling mode on two replicas (the
``xlam`` parser and a tools chat template; tool calls asked for with ``--bfcl-extra-body``) and
in prompting mode (the model's own chat template, a multi-turn conversation included), and
stops it leaving no process or temporary file behind; a rerun answered from the response cache
starts no server (under xdist too), and replaying the written results gives the same verdicts.
The ``handler`` tests ask as the leaderboard's Qwen handlers ask, on ``/v1/completions`` (the
prompt rendered here, ``max_tokens`` from the checkpoint's tokenizer and window), with vLLM
started without tool calling.

Needs a vLLM environment, given by two environment variables (``.ci/vllm/prepare.sh`` makes
one and prints them):

- ``BFCL_VLLM_EXE``: the executable as ``--bfcl-vllm-exe`` takes it (the CPU build's own
  ``vllm`` command, or its virtualenv's Python);
- ``BFCL_VLLM_MODEL``: SmolLM2-135M-Instruct as a Hugging Face folder.

A 135M model scores low; the test asserts how the run behaves, never the model's score. Each
mode starts vLLM once (a minute or two on two cores), so a handful of entries are asked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_bfcl.resources import project_data_file

pytestmark = pytest.mark.vllm

EXE = os.environ.get("BFCL_VLLM_EXE", "")
MODEL = os.environ.get("BFCL_VLLM_MODEL", "")
if not EXE or not MODEL:
    pytest.skip(
        "needs a vLLM environment: set BFCL_VLLM_EXE and BFCL_VLLM_MODEL "
        "(.ci/vllm/prepare.sh DIR makes one and prints them)",
        allow_module_level=True,
    )

TEMPLATE = project_data_file("smollm2_tools.jinja")  # ships with the plugin
SERVING = "--dtype bfloat16 --max-model-len 8192 --enforce-eager"
# Ids no other id contains (-k matches substrings); a two-turn conversation on one API.
SINGLE = ("simple_python_226", "simple_python_301", "simple_python_399")
CONVERSATION = "multi_turn_base_100"
# fc: the xlam parser and the tools template, two replicas; tool_choice "required" (a field
# beyond the leaderboard's) because a 135M model seldom calls a tool unasked.
# prompt: the model's own chat template, and a conversation.
MODES = {
    "fc": (
        f"--bfcl-vllm-args={SERVING} --tool-call-parser xlam --chat-template {TEMPLATE}",
        "--bfcl-vllm-replicas=2",
        '--bfcl-extra-body={"tool_choice": "required"}',
        "--bfcl-category=simple_python",
        "-k", " or ".join(SINGLE),
    ),
    "prompt": (
        f"--bfcl-vllm-args={SERVING}",
        "--bfcl-category=simple_python,multi_turn_base",
        "-k", " or ".join((*SINGLE[:2], CONVERSATION)),
    ),
}  # fmt: skip
EXPECTED = {"fc": len(SINGLE), "prompt": 3}


@dataclass
class Run:
    stdout: str
    verdicts: dict[str, str]  # junit testcase name -> passed / failed / error / skipped
    report: dict
    wall_s: float
    logs: list[Path]  # the vLLM logs this run wrote


def _verdicts(junit: Path) -> dict[str, str]:
    verdicts = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "")
        if not name or case.get("classname", "").endswith("summary"):
            continue
        outcome = "passed"
        for kind in ("failure", "error", "skipped"):
            if case.find(kind) is not None:
                outcome = kind.replace("failure", "failed")
        verdicts[name] = outcome
    return verdicts


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("vllm")
    (path / "tmp").mkdir()
    return path


def _run(workdir: Path, name: str, model: str, *args: str) -> Run:
    junit, report = workdir / f"{name}.xml", workdir / f"{name}.json"
    logs = workdir / f"logs-{name}"
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--bfcl-model={model}",
        f"--bfcl-cache-dir={workdir / 'cache'}", f"--junitxml={junit}",
        f"--bfcl-report={report}", f"--bfcl-vllm-log={logs / 'vllm.log'}", "--rootdir",
        str(workdir), *args,
    ]  # fmt: skip
    # vLLM's own temporary files must land in the run's folder: anything in this TMPDIR after
    # the run is a leak
    env = {
        **os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
        "TMPDIR": str(workdir / "tmp"),
    }  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    wall = time.monotonic() - started
    assert junit.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    return Run(
        done.stdout,
        _verdicts(junit),
        json.loads(report.read_text()),
        wall,
        sorted(logs.glob("vllm*.log")),
    )


def _generate(workdir: Path, mode: str, name: str, *extra: str) -> Run:
    return _run(
        workdir, name, f"vllm:{MODEL}", f"--bfcl-vllm-exe={EXE}", f"--bfcl-mode={mode}",
        f"--bfcl-results-dir={workdir / ('results-' + mode)}", "--bfcl-max-tokens=128",
        "--bfcl-timeout=600", *MODES[mode], *extra,
    )  # fmt: skip


@pytest.fixture(scope="module")
def first(workdir) -> dict[str, Run]:
    return {mode: _generate(workdir, mode, mode) for mode in MODES}


def test_every_entry_is_scored_through_real_vllm(first):
    for mode, run in first.items():
        assert len(run.verdicts) == EXPECTED[mode], run.stdout[-4000:]
        # a verdict for every entry: no infrastructure error, nothing skipped
        assert set(run.verdicts.values()) <= {"passed", "failed"}, run.stdout[-4000:]
        usage = run.report["usage"]
        assert usage["output_tokens"] > 0 and usage["model_queries"] >= EXPECTED[mode]
        vllm = run.report["metadata"]["model_info"]["vllm"]
        assert vllm["started"] and vllm["checkpoint"].startswith(str(Path(MODEL).resolve()))


def _serving_args(log: str) -> str:
    """vLLM's line with the arguments it was given (those that differ from its defaults)."""
    return next((line for line in log.splitlines() if "non-default args:" in line), "")


def test_fc_mode_runs_the_tool_parser_and_prompt_mode_the_chat_template(first, workdir):
    for log in first["fc"].logs:  # each replica, as vLLM read its arguments
        text = log.read_text(encoding="utf-8", errors="replace")
        assert "'tool_call_parser': 'xlam'" in _serving_args(text)
        assert "smollm2_tools.jinja" in _serving_args(text)
        assert '"auto" tool choice has been enabled' in text
        assert 'POST /v1/chat/completions HTTP/1.1" 200' in text
    # vLLM answered with tool calls, which the plugin read as calls
    [path] = (workdir / "results-fc").rglob("BFCL_v4_simple_python_result.json")
    results = [json.loads(line)["result"] for line in path.read_text().splitlines()]
    assert any(isinstance(r, list) and r for r in results), results
    assert first["fc"].report["metadata"]["extra_body"] == {"tool_choice": "required"}
    assert "not comparable to the leaderboard" in first["fc"].stdout
    text = first["prompt"].logs[0].read_text(encoding="utf-8", errors="replace")
    assert "tool_call_parser" not in _serving_args(text)  # the model's own template
    assert 'POST /v1/chat/completions HTTP/1.1" 200' in text


def test_the_conversation_is_held_over_several_requests(first, workdir):
    assert first["prompt"].verdicts[CONVERSATION] in ("passed", "failed")
    [path] = (workdir / "results-prompt").rglob("BFCL_v4_multi_turn_base_result.json")
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["id"] == CONVERSATION and len(record["result"]) == 2  # both turns answered


def test_two_replicas_share_the_work(first):
    assert len(first["fc"].logs) == 2
    replicas = first["fc"].report["usage"]["replicas"]
    assert len(replicas) == 2 and all(r["answered"] >= 1 for r in replicas), replicas


def _pids(log: Path) -> set[int]:
    text = log.read_text(encoding="utf-8", errors="replace")
    return {int(p) for p in re.findall(r"\bpid=(\d+)\)", text)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_servers_stop_clean(first, workdir):
    for run in first.values():
        pids = set().union(*(_pids(log) for log in run.logs))
        assert pids and not [p for p in pids if _alive(p)]
        assert not list(run.logs[0].parent.glob("vllm-tmp-*"))
    assert not [p.name for p in (workdir / "tmp").iterdir()]  # nothing left in the temp dir


def test_a_rerun_from_the_cache_starts_no_vllm(first, workdir):
    for mode in MODES:
        again = _generate(workdir, mode, f"{mode}-again")
        assert again.verdicts == first[mode].verdicts
        assert again.report["metadata"]["model_info"]["vllm"]["started"] is False
        assert again.logs == []  # no server was started, so none wrote a log
        print(f"{mode} rerun from the cache: {again.wall_s:.1f} s")


def test_a_rerun_from_the_cache_under_xdist_starts_no_vllm(first, workdir):
    # The workers would ask the controller for the servers at their first cache miss; with
    # none, the controller starts nothing.
    mode = "prompt"
    again = _generate(workdir, mode, f"{mode}-xdist-again", "-n", "2")
    assert again.verdicts == first[mode].verdicts
    assert again.report["metadata"]["model_info"]["vllm"]["started"] is False
    assert again.logs == []
    print(f"{mode} rerun from the cache under -n 2: {again.wall_s:.1f} s")


def test_replaying_the_results_gives_the_same_verdicts(first, workdir):
    for mode in MODES:
        selection = [a for a in MODES[mode] if not a.startswith("--bfcl-vllm")]
        selection = [a for a in selection if not a.startswith("--bfcl-extra-body")]
        replayed = _run(
            workdir, f"{mode}-replay", f"replay:{workdir / ('results-' + mode)}",
            f"--bfcl-mode={mode}", *selection,
        )  # fmt: skip
        assert replayed.verdicts == first[mode].verdicts


def test_times_are_recorded(first, record_property):
    lines = []
    for mode, run in first.items():
        log = run.logs[0].read_text(encoding="utf-8", errors="replace")
        began = re.search(r"INFO (\d\d-\d\d \d\d:\d\d:\d\d)", log)
        ready = re.search(r"INFO (\d\d-\d\d \d\d:\d\d:\d\d) \[entry\.py:\d+\] Starting vLLM", log)
        latency = run.report["usage"].get("latency_s", {})
        record_property(f"{mode}_wall_s", round(run.wall_s, 1))
        lines.append(
            f"{mode}: {len(run.verdicts)} entries in {run.wall_s:.0f} s "
            f"(server log from {began.group(1) if began else '?'} to ready at "
            f"{ready.group(1) if ready else '?'}), latency {latency}"
        )
    print("\n".join(lines))


# -- the completions route: the leaderboard's Qwen handlers render the prompt ----------------
# SmolLM2 speaks ChatML, as Qwen does. vLLM is given no tool parser nor chat template: the
# prompt is rendered here and asked on /v1/completions, with max_tokens from SmolLM2's own
# tokenizer and its config's window. A conftest in the run's folder records every request as
# the plugin sends it (the request-transform hook), and vLLM logs each request's parameters.
HANDLER_RUNS = {
    "hp": (
        "--bfcl-leaderboard-model=Qwen/Qwen3-8B",
        "--bfcl-category=simple_python,multi_turn_base",
        "-k", " or ".join((*SINGLE[:2], CONVERSATION)),
    ),
    "hf": (
        "--bfcl-leaderboard-model=Qwen/Qwen3-8B-FC",
        "--bfcl-category=simple_python",
        "-k", SINGLE[0],  # one: a 135M model's calls run to the 4,096 tokens allowed
    ),
}  # fmt: skip
HANDLER_FAMILY = {"hp": "qwen", "hf": "qwen-fc"}
RECORDING_CONFTEST = """
import json, os

def pytest_bfcl_transform_request(request, model):
    with open(os.environ["BFCL_RECORDED_REQUESTS"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(request) + "\\n")
"""


@pytest.fixture(scope="module")
def handler_workdir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("vh")  # short: vLLM's IPC socket paths go under it
    (path / "tmp").mkdir()
    (path / "conftest.py").write_text(RECORDING_CONFTEST)
    return path


def _handler_run(workdir: Path, name: str) -> Run:
    os.environ["BFCL_RECORDED_REQUESTS"] = str(workdir / f"{name}.requests.jsonl")
    try:
        return _run(
            workdir, name, f"vllm:{MODEL}", f"--bfcl-vllm-exe={EXE}",
            f"--bfcl-vllm-args={SERVING} --enable-log-requests",
            f"--bfcl-results-dir={workdir / ('results-' + name)}", "--bfcl-timeout=600",
            *HANDLER_RUNS[name.removesuffix("-again")],
        )  # fmt: skip
    finally:
        del os.environ["BFCL_RECORDED_REQUESTS"]


@pytest.fixture(scope="module")
def handler(handler_workdir) -> dict[str, Run]:
    return {name: _handler_run(handler_workdir, name) for name in HANDLER_RUNS}


def _recorded(workdir: Path, name: str) -> list[dict]:
    path = workdir / f"{name}.requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_qwen_handlers_ask_vllm_on_completions_and_every_answer_is_decoded(
    handler, handler_workdir
):
    from tokenizers import Tokenizer

    from pytest_bfcl.handlers.tokens import MARGIN, max_tokens_for

    tokenizer = Tokenizer.from_file(str(Path(MODEL) / "tokenizer.json"))
    window = json.loads((Path(MODEL) / "config.json").read_text())["max_position_embeddings"]
    for name, run in handler.items():
        expected = 3 if name == "hp" else 1
        assert len(run.verdicts) == expected, run.stdout[-4000:]
        assert set(run.verdicts.values()) <= {"passed", "failed"}, run.stdout[-4000:]
        meta = run.report["metadata"]
        assert meta["wire_format"] == f"completions:{HANDLER_FAMILY[name]}"
        assert meta["model_info"]["handler"]["tokens"] == f"tokenizer {MODEL}"
        assert (
            f"prompt tokens counted by tokenizer {MODEL}; vLLM started without "
            "--enable-auto-tool-choice"
        ) in run.stdout
        requests = _recorded(handler_workdir, name)
        assert len(requests) >= expected
        fitting = []  # the max_tokens of the requests whose prompt fits the window
        for body in requests:  # the Qwen handler's ChatML prompt, not a chat template's
            prompt = body["prompt"]
            assert prompt.startswith("<|im_start|>system\n") and "messages" not in body
            assert prompt.endswith("<|im_start|>assistant\n"), prompt[-200:]
            if name == "hf":
                assert "<tools>" in prompt
            else:
                assert "You are an expert in composing functions" in prompt
            count = len(tokenizer.encode(prompt, add_special_tokens=False).ids)
            assert body["max_tokens"] == max_tokens_for(count, window)
            assert body["temperature"] == 0.001
            if count + MARGIN <= window:
                fitting.append(body["max_tokens"])
        [log] = run.logs
        text = log.read_text(encoding="utf-8", errors="replace")
        args = _serving_args(text)
        assert "tool_call_parser" not in args and "enable_auto_tool_choice" not in args
        assert "chat_template" not in args
        assert 'POST /v1/completions HTTP/1.1" 200' in text
        assert "POST /v1/chat/completions" not in text
        # vLLM received the max_tokens counted here, request by request (a prompt past the
        # window, asked with 1,000 as the handler asks, is refused before it is logged)
        received = re.findall(r"Received request \S+ params: .*?max_tokens=(\d+)", text)
        assert sorted(int(n) for n in received) == sorted(fitting)
    # the conversation was held over several requests: its answers went back into its prompt
    assert len(_recorded(handler_workdir, "hp")) > 3
    [path] = (handler_workdir / "results-hp").rglob("BFCL_v4_multi_turn_base_result.json")
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["id"] == CONVERSATION


def test_the_handler_route_servers_stop_clean_and_a_cached_rerun_starts_none(
    handler, handler_workdir
):
    for run in handler.values():
        pids = set().union(*(_pids(log) for log in run.logs))
        assert pids and not [p for p in pids if _alive(p)]
        assert not list(run.logs[0].parent.glob("vllm-tmp-*"))
    assert not [p.name for p in (handler_workdir / "tmp").iterdir()]
    # the tokenizer is the checkpoint's own: a rerun needs vLLM for nothing (the function-
    # calling run: every answer of it is cached, while a prompt refused as past the window,
    # as the conversation's last may be, is asked again)
    again = _handler_run(handler_workdir, "hf-again")
    assert again.verdicts == handler["hf"].verdicts
    assert again.report["metadata"]["model_info"]["vllm"]["started"] is False
    assert again.logs == []
    lines = [
        f"{name}: {len(r.verdicts)} entries in {r.wall_s:.0f} s" for name, r in handler.items()
    ]
    print("\n".join([*lines, f"hf rerun from the cache: {again.wall_s:.1f} s"]))
