"""vLLM started only when a request needs it, with the stand-in executable: a rerun answered
from the response cache starts no server, two spellings of a local checkpoint share answers
while a changed checkpoint does not, a server that cannot start when first needed stops the run
once with its log, and vLLM's temporary files stay in the run's folder and go with the server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from pytest_bfcl.testing.stand_in_vllm import starts_recorded

STAND_IN = f"{sys.executable} -m pytest_bfcl.testing.stand_in_vllm"


def checkpoint(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (folder / "model.safetensors").write_bytes(b"\0" * 64)
    return folder


def run(pytester, tmp_path: Path, model: str, name: str, *extra: str):
    report = tmp_path / f"{name}.json"
    result = pytester.runpytest(
        f"--bfcl-model=vllm:{model}",
        f"--bfcl-vllm-exe={STAND_IN}",
        "--bfcl-vllm-args=--tool-call-parser hermes",
        f"--bfcl-vllm-log={tmp_path / 'logs' / (name + '.log')}",
        "--bfcl-category=live_parallel",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        f"--bfcl-report={report}",
        "--bfcl-retries=1",
        "-p",
        "no:cacheprovider",
        *extra,
    )
    return result, (json.loads(report.read_text()) if report.exists() else None)


def test_a_rerun_from_the_cache_starts_no_server(pytester, stand_in, tmp_path):
    folder = checkpoint(pytester.path / "ckpt")
    first, report = run(pytester, tmp_path, str(folder), "first")
    first.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 1 and report["metadata"]["model_info"]["vllm"]["started"]
    # the same folder spelled relative to the working directory: same answers, no server
    again, report = run(pytester, tmp_path, "./ckpt/", "again")
    again.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 1
    assert report["metadata"]["model_info"]["vllm"]["started"] is False
    assert not (tmp_path / "logs" / "again.log").exists()
    assert report["metadata"]["model_info"]["vllm"]["checkpoint"].startswith(str(folder))
    # retrained: other weights are another model, asked again
    (folder / "model.safetensors").write_bytes(b"\0" * 65)
    changed, _ = run(pytester, tmp_path, "./ckpt", "changed")
    changed.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 2


def test_a_checkpoint_written_over_with_the_same_names_and_sizes_is_asked_again(
    pytester, stand_in, tmp_path
):
    """A fine-tune written over the same folder: same file names and sizes, new bytes (its
    modification time put back too): never answered from the old checkpoint's cache."""
    folder = checkpoint(pytester.path / "ckpt")
    first, _ = run(pytester, tmp_path, str(folder), "first")
    first.assert_outcomes(passed=16)
    weights = folder / "model.safetensors"
    stat = weights.stat()
    weights.write_bytes(b"\1" * 64)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again, report = run(pytester, tmp_path, str(folder), "again")
    again.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 2 and report["metadata"]["model_info"]["vllm"]["started"]
    (folder / "chat_template.jinja").write_text("{{ messages }}")  # a new template
    templated, _ = run(pytester, tmp_path, str(folder), "templated")
    templated.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 3


def test_a_server_that_cannot_start_when_needed_stops_the_run_once(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.setenv("STANDIN_FAIL", "1")
    result, _ = run(pytester, tmp_path, "acme/tool-model-7b", "failing")
    assert result.ret != 0
    out = result.stdout.str()
    assert "vLLM exited with status 1" in out and "CUDA out of memory" in out
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 0
    assert starts_recorded(stand_in) == 1  # tried once, not once per entry


def test_temporary_files_stay_in_the_run_s_folder_and_go_with_the_server(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.setenv("STANDIN_TEMP_FILE", "1")
    result, _ = run(pytester, tmp_path, "acme/tool-model-7b", "tmp", "--bfcl-no-cache")
    result.assert_outcomes(passed=16)
    logs = tmp_path / "logs"
    first_line = (logs / "tmp.log").read_text().splitlines()[0]
    assert f"TMPDIR={logs}/vllm-tmp-" in first_line
    assert f"VLLM_CACHE_ROOT={logs}/vllm-cache/vllm" in first_line
    [left] = [line for line in (logs / "tmp.log").read_text().splitlines() if "vllm_dist_" in line]
    assert f"{logs}/vllm-tmp-" in left  # vLLM's temporary file was made in the run's folder
    assert not list(logs.glob("vllm-tmp-*"))  # and removed with it at stop


def run_xdist(pytester, tmp_path: Path, name: str):
    report = tmp_path / f"{name}.json"
    result = pytester.runpytest_subprocess(
        "--bfcl-model=vllm:acme/tool-model-7b",
        f"--bfcl-vllm-exe={STAND_IN}",
        "--bfcl-vllm-args=--tool-call-parser hermes",
        f"--bfcl-vllm-log={tmp_path / 'logs' / (name + '.log')}",
        "--bfcl-category=live_parallel",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        f"--bfcl-report={report}",
        "--bfcl-retries=1",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
    )
    return result, (json.loads(report.read_text()) if report.exists() else None)


def test_under_xdist_the_controller_starts_the_server_when_a_worker_first_needs_it(
    pytester, stand_in, tmp_path
):
    result, report = run_xdist(pytester, tmp_path, "first")
    result.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 1  # one server, shared: no worker started its own
    assert report["metadata"]["model_info"]["vllm"]["started"]
    # a rerun answered from the cache: no worker asks, so no server starts
    again, report = run_xdist(pytester, tmp_path, "again")
    again.assert_outcomes(passed=16)
    assert starts_recorded(stand_in) == 1
    assert report["metadata"]["model_info"]["vllm"]["started"] is False
    assert not (tmp_path / "logs" / "again.log").exists()
    assert not list((tmp_path / "logs").glob("start-*"))  # the request's files are gone


def test_under_xdist_a_server_that_cannot_start_stops_every_worker_once(
    pytester, stand_in, tmp_path, monkeypatch
):
    monkeypatch.setenv("STANDIN_FAIL", "1")
    result, _ = run_xdist(pytester, tmp_path, "failing")
    assert result.ret != 0
    out = result.stdout.str()
    assert "vLLM exited with status 1" in out and "CUDA out of memory" in out
    assert result.parseoutcomes().get("passed", 0) == 0
    assert starts_recorded(stand_in) == 1  # tried once for both workers


def test_an_executable_that_is_not_there_is_said_at_start(pytester, stand_in, tmp_path):
    result, _ = run(
        pytester, tmp_path, "acme/tool-model-7b", "missing",
        f"--bfcl-vllm-exe={tmp_path / 'venv' / 'bin' / 'vllm'}",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--bfcl-vllm-exe" in err and "is not a command here" in err and "docs/vllm.md" in err
    assert starts_recorded(stand_in) == 0
