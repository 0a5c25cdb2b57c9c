"""The vLLM server's life cycle, driven with a stand-in executable: start, health wait, one
server shared by xdist workers, teardown on success, failure and interrupt, the log in the
failure message. A test at the end needs a real GPU and vLLM, and skips without them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_bfcl.models.base import ModelSpecError
from pytest_bfcl.servers.vllm_server import replica_devices

STAND_IN = f"{sys.executable} -m pytest_bfcl.testing.stand_in_vllm"


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    starts = tmp_path / "starts.txt"
    monkeypatch.setenv("STANDIN_STARTS", str(starts))
    monkeypatch.setenv("STANDIN_CATEGORIES", "live_parallel,live_simple")
    monkeypatch.delenv("PYTEST_BFCL_VLLM_URL", raising=False)
    return starts


def vllm_args(tmp_path, *extra, category="live_parallel"):
    return [
        "--bfcl-model=vllm:acme/tool-model-7b",
        f"--bfcl-vllm-exe={STAND_IN}",
        "--bfcl-vllm-args=--tool-call-parser hermes --max-model-len 4096",
        f"--bfcl-vllm-log={tmp_path / 'vllm.log'}",
        f"--bfcl-category={category}",
        "--bfcl-no-cache",
        "--bfcl-retries=1",
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def pids(starts: Path) -> list[int]:
    return [int(x) for x in starts.read_text().split()] if starts.exists() else []


def gone(pid: int, wait: float = 10.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_start_health_wait_scores_and_teardown(pytester, stand_in, tmp_path):
    result = pytester.runpytest(*vllm_args(tmp_path))
    result.assert_outcomes(passed=16)
    [pid] = pids(stand_in)
    assert gone(pid)  # stopped at the end of the session
    log = (tmp_path / "vllm.log").read_text()
    assert "serve acme/tool-model-7b" in log
    # the user's flags pass through untouched; tool calling is switched on
    assert "'--tool-call-parser', 'hermes', '--max-model-len', '4096'" in log
    assert "--enable-auto-tool-choice" in log
    assert "PYTEST_BFCL_VLLM_URL" not in os.environ


def test_one_server_shared_by_xdist_workers(pytester, stand_in, tmp_path):
    report = tmp_path / "report.json"
    result = pytester.runpytest_subprocess(
        *vllm_args(tmp_path, "-n", "2", f"--bfcl-report={report}", category="live_simple")
    )
    result.assert_outcomes(passed=256, failed=2)  # as the oracle: its 2 known failures
    assert len(pids(stand_in)) == 1
    assert gone(pids(stand_in)[0])
    assert '"vllm"' in report.read_text()  # serving flags and identity in the metadata


def test_a_server_that_fails_to_start_shows_its_log(pytester, stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_FAIL", "1")
    result = pytester.runpytest(*vllm_args(tmp_path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "vLLM exited with status 1" in err and str(tmp_path / "vllm.log") in err
    assert "CUDA out of memory" in err


def test_a_server_that_dies_mid_run_stops_the_session_quickly(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.setenv("STANDIN_DIE_AFTER", "5")
    started = time.monotonic()
    result = pytester.runpytest(
        *vllm_args(tmp_path, "--bfcl-concurrency=1", category="live_simple")
    )
    assert time.monotonic() - started < 60
    out = result.stdout.str()
    assert "the vLLM server died" in out and "device lost" in out
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 5 and outcomes.get("errors", outcomes.get("error", 0)) >= 1
    assert outcomes.get("passed", 0) + outcomes.get("errors", 0) < 100  # stopped, not 258 errors


def test_tool_calling_needs_a_parser(pytester, stand_in, tmp_path):
    args = [a for a in vllm_args(tmp_path) if not a.startswith("--bfcl-vllm-args")]
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "'--tool-call-parser NAME'" in err and "docs/vllm.md" in err
    assert pids(stand_in) == []


def test_the_parser_asked_for_is_the_model_family_s(pytester, stand_in, tmp_path):
    folder = tmp_path / "my-checkpoint"  # a local folder: recognised by its config.json
    folder.mkdir()
    (folder / "config.json").write_text(
        '{"model_type": "mistral", "architectures": ["MistralForCausalLM"]}'
    )
    args = [
        a for a in vllm_args(tmp_path) if not a.startswith(("--bfcl-vllm-args", "--bfcl-model"))
    ]
    result = pytester.runpytest(f"--bfcl-model=vllm:{folder}", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "'--tool-call-parser mistral', with --tokenizer-mode mistral" in err
    assert pids(stand_in) == []


def interrupt_while_serving(args: list[str], starts: Path, tmp_path: Path, data_source) -> str:
    """Run a session with these options in a process of its own, press Ctrl-C once the
    stand-in has been serving a while, and return the session's output. The stand-in must
    answer slowly (``STANDIN_LATENCY``) so that the session is still running."""
    command = [
        sys.executable, "-m", "pytest", *args, f"--bfcl-data={data_source.data_dir}",
        "--bfcl-concurrency=2", str(tmp_path),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, text=True,
        # a background job inherits SIGINT ignored, and Python would never raise
        # KeyboardInterrupt for it: the default back
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not pids(starts) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # serving
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    return out


def test_interrupt_stops_the_server(stand_in, tmp_path, monkeypatch, data_source):
    monkeypatch.setenv("STANDIN_LATENCY", "0.5")
    args = vllm_args(tmp_path, category="live_simple")
    out = interrupt_while_serving(args, stand_in, tmp_path, data_source)
    assert "KeyboardInterrupt" in out or "Interrupted" in out
    assert gone(pids(stand_in)[0])


# -- several replicas ----------------------------------------------------------------------------


def replica_args(tmp_path, replicas, *extra, category="live_simple"):
    args = vllm_args(tmp_path, f"--bfcl-vllm-replicas={replicas}", *extra, category=category)
    return [
        "--bfcl-vllm-args=--tool-call-parser hermes --tensor-parallel-size 2"
        if a.startswith("--bfcl-vllm-args")
        else a
        for a in args
    ]


def test_replicas_start_on_their_own_devices_share_the_work_and_stop(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    report = tmp_path / "report.json"
    result = pytester.runpytest(*replica_args(tmp_path, "2", f"--bfcl-report={report}"))
    result.assert_outcomes(passed=256, failed=2)
    assert len(pids(stand_in)) == 2 and all(gone(pid) for pid in pids(stand_in))
    logs = [tmp_path / "vllm-0.log", tmp_path / "vllm-1.log"]  # one log each
    assert "devices=0,1" in logs[0].read_text() and "devices=2,3" in logs[1].read_text()
    assert "CUDA_VISIBLE_DEVICES=0,1 " in logs[0].read_text().splitlines()[0]
    data = json.loads(report.read_text())
    replicas = data["usage"]["replicas"]
    assert len(replicas) == 2 and all(r["requests"] > 20 for r in replicas)
    assert sum(r["answered"] for r in replicas) == 258
    assert [r["devices"] for r in data["metadata"]["model_info"]["vllm"]["replicas"]] == [
        "0,1",
        "2,3",
    ]


def test_a_replica_that_dies_is_given_up_and_the_run_loses_nothing(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.setenv("STANDIN_DIE_AFTER", "20")
    monkeypatch.setenv("STANDIN_DIE_DEVICES", "1")
    result = pytester.runpytest(
        *vllm_args(tmp_path, "--bfcl-vllm-replicas=0;1", category="live_simple")
    )
    result.assert_outcomes(passed=256, failed=2)  # no errors: its requests went to the other
    line = next(
        line for line in result.outlines if "replica http://" in line and "given up" in line
    )
    assert "the vLLM server died (status 3)" in line
    assert len(pids(stand_in)) == 2 and all(gone(pid) for pid in pids(stand_in))


def test_under_xdist_a_replica_that_dies_is_given_up_with_its_log(
    pytester, stand_in, tmp_path, monkeypatch
):
    """Workers cannot see the servers' processes: the controller writes a death notice beside
    the log, and the workers give that replica up with it."""
    monkeypatch.setenv("STANDIN_DIE_AFTER", "10")
    monkeypatch.setenv("STANDIN_DIE_DEVICES", "1")
    monkeypatch.setenv("STANDIN_LATENCY", "0.03")  # the run goes on for seconds after it
    report = tmp_path / "report.json"
    run = vllm_args(
        tmp_path, "--bfcl-vllm-replicas=0;1", "-n", "2", f"--bfcl-report={report}",
        "--bfcl-concurrency=4", category="live_simple",
    )  # fmt: skip
    result = pytester.runpytest_subprocess(*run)
    result.assert_outcomes(passed=256, failed=2)
    dead = [r for r in json.loads(report.read_text())["usage"]["replicas"] if r["ejections"]]
    assert len(dead) == 1 and "given up" in dead[0]["states"]
    assert any("the vLLM server died (status 3)" in reason for reason in dead[0]["reasons"])
    assert all(gone(pid) for pid in pids(stand_in))


def test_a_replica_that_fails_to_start_stops_them_all(pytester, stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_FAIL_DEVICES", "2,3")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    result = pytester.runpytest(*replica_args(tmp_path, "2"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "vLLM exited with status 1" in err and str(tmp_path / "vllm-1.log") in err
    assert all(gone(pid) for pid in pids(stand_in))


@pytest.mark.parametrize(
    ("spec", "flags", "visible", "expected"),
    [
        (None, [], None, [None]),
        ("1", [], None, [None]),
        ("3", [], None, ["0", "1", "2"]),
        ("2", ["--tensor-parallel-size", "2"], None, ["0,1", "2,3"]),
        ("2", ["-tp=2", "--pipeline-parallel-size", "2"], None, ["0,1,2,3", "4,5,6,7"]),
        ("2", [], "4,5,6", ["4", "5"]),  # numbered within CUDA_VISIBLE_DEVICES
        ("0,1; 2,3", [], None, ["0,1", "2,3"]),
        ("GPU-a;GPU-b", [], None, ["GPU-a", "GPU-b"]),  # device UUIDs
    ],
)
def test_replica_devices(spec, flags, visible, expected):
    assert replica_devices(spec, flags, visible) == expected


@pytest.mark.parametrize(
    ("spec", "flags", "visible", "message"),
    [
        (
            "2",
            ["--tensor-parallel-size", "2"],
            "0,1",
            "needs 4 devices; CUDA_VISIBLE_DEVICES lists 2",
        ),
        ("0,1;1,2", [], None, "a device is in two replicas"),
        ("0,1;;x y", [], None, "give a count"),
        ("2", ["--tensor-parallel-size", "two"], None, "needs a positive number"),
    ],
)
def test_replica_devices_refused(spec, flags, visible, message):
    with pytest.raises(ModelSpecError, match=message):
        replica_devices(spec, flags, visible)


@pytest.mark.gpu
def test_real_vllm_on_a_gpu(pytester, tmp_path):
    if shutil.which("vllm") is None or shutil.which("nvidia-smi") is None:
        pytest.skip("needs vllm and an NVIDIA GPU")
    model = os.environ.get("BFCL_GPU_TEST_MODEL", "Qwen/Qwen2.5-0.5B-Instruct")
    result = pytester.runpytest(
        f"--bfcl-model=vllm:{model}",
        "--bfcl-vllm-args=--tool-call-parser hermes --max-model-len 4096",
        "--bfcl-category=simple_python",
        "--bfcl-sample=20",
        "-p",
        "no:cacheprovider",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 20
