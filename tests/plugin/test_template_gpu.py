"""The template's jobs for a team's real model: on a GPU runner (vLLM started by the plugin
from the checkpoint checkpoint.txt names, fetched by ci/fetch-checkpoint.sh) and for a model
served elsewhere (its URL and a key from the CI's secrets). The endpoint job's commands run as
written against a local server: scores only before main has its baseline, then the gate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "examples" / "model-repo"
FETCH = TEMPLATE / "ci" / "fetch-checkpoint.sh"


def _fetch(cwd: Path, text: str, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    (cwd / "checkpoint.txt").write_text(text)
    return subprocess.run(["bash", str(FETCH)], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": path}, timeout=60)  # fmt: skip


def test_the_checkpoint_is_the_folder_checkpoint_txt_names_or_one_line_why_not(tmp_path):
    ckpt = tmp_path / "models" / "v12"
    ckpt.mkdir(parents=True)
    (ckpt / "config.json").write_text("{}")
    done = _fetch(tmp_path, "# the checkpoint under test\n\nmodels/v12\n/elsewhere\n")
    assert done.returncode == 0 and done.stdout.strip() == str(ckpt)
    assert _fetch(tmp_path, f"{ckpt}\n").stdout.strip() == str(ckpt)
    (tmp_path / ".checkpoint" / "trained").mkdir(parents=True)
    (tmp_path / ".checkpoint" / "trained" / "config.json").write_text("{}")
    assert _fetch(tmp_path, "artifact:trained\n").stdout.strip().endswith(".checkpoint/trained")
    for text, said in (
        ("models\n", "no checkpoint there (no config.json"),
        ("# nothing\n", "names no checkpoint"),
        ("hf:org/model@abc\n", "hf: needs huggingface-cli"),
        ("s3://bucket/model\n", "s3: needs the aws CLI"),
        ("artifact:absent\n", "no config.json under"),
    ):
        done = _fetch(tmp_path, text)
        assert done.returncode == 2 and done.stdout == "", text
        assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    # the template's own line names a model on the hub at a revision
    lines = (TEMPLATE / "checkpoint.txt").read_text().splitlines()
    assert next(line for line in lines if line and not line.startswith("#")).startswith("hf:")


def test_a_fake_hub_client_gives_the_folder_it_downloaded(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    client = bin_dir / "huggingface-cli"
    client.write_text('#!/bin/sh\necho "$@" > args.txt\necho /hf/models--org--m/snapshots/abc\n')
    client.chmod(0o755)
    done = _fetch(tmp_path, "hf:org/m@abc\n", f"{bin_dir}:/usr/bin:/bin")
    assert done.returncode == 0 and done.stdout.strip() == "/hf/models--org--m/snapshots/abc"
    assert (tmp_path / "args.txt").read_text().split() == [
        "download", "--quiet", "--revision", "abc", "org/m",
    ]  # fmt: skip


def _github() -> dict:
    return yaml.safe_load((TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text())


def test_both_ci_files_hold_a_gpu_job_and_a_served_model_job_off_until_configured():
    jobs = _github()["jobs"]
    gpu, endpoint = jobs["gpu"], jobs["endpoint"]
    assert "self-hosted" in gpu["runs-on"] and "gpu" in gpu["runs-on"]
    assert "vars.BFCL_GPU == 'true'" in gpu["if"] and "vars.BFCL_BASE_URL" in endpoint["if"]
    gpu_lines = " ".join(s.get("run", "") for s in gpu["steps"])
    assert "ci/fetch-checkpoint.sh" in gpu_lines and '--bfcl-model="vllm:$CHECKPOINT"' in gpu_lines
    # the checkpoint fetched on a line of its own: its failure stops the job (inside echo's
    # arguments it would not)
    fetch = next(s for s in gpu["steps"] if "fetch-checkpoint" in s.get("run", ""))
    assert fetch["run"].splitlines()[0].startswith('checkpoint="$(ci/fetch-checkpoint.sh)"')
    assert "../" not in (TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text()
    assert endpoint["env"]["BFCL_API_KEY"] == "${{ secrets.BFCL_API_KEY }}"
    end_lines = " ".join(s.get("run", "") for s in endpoint["steps"])
    assert "--bfcl-api-key-env=BFCL_API_KEY" in end_lines and "BFCL_API_KEY=" not in end_lines
    gitlab = yaml.safe_load((TEMPLATE / ".gitlab-ci.yml").read_text())
    assert gitlab["bfcl-gpu"]["tags"] == ["gpu"]
    assert any("vllm:$CHECKPOINT" in line for line in gitlab["bfcl-gpu"]["script"])
    assert any(
        "--bfcl-api-key-env=BFCL_API_KEY" in line for line in gitlab["bfcl-endpoint"]["script"]
    )
    ignored = (TEMPLATE / ".gitignore").read_text().split()
    assert ".checkpoint/" in ignored and ".hf-cache/" in ignored


def _step(job: dict, when: str) -> str:
    return next(s["run"] for s in job["steps"] if s.get("if") == when and "run" in s)


def test_the_served_model_job_runs_as_written(tmp_path, dataset, data_source):
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    team = tmp_path / "team"
    shutil.copytree(TEMPLATE, team)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "template"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=team, check=True, capture_output=True)
    subprocess.run(["git", "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=team, check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pytest").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pytest "$@"\n')
    (bin_dir / "pytest").chmod(0o755)
    endpoint = _github()["jobs"]["endpoint"]
    with FakeOpenAI(dataset, ["simple_python"]) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GITHUB"))}
        env.update(
            PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHONPATH=str(REPO),
            BFCL_BASE_URL=server.base_url, BFCL_ENDPOINT_MODEL="test-model",
            BFCL_API_KEY="sk-team-secret-0123456789",
            PYTEST_ADDOPTS=f"-p no:cacheprovider --bfcl-category=simple_python "
            f"--bfcl-data={data_source.data_dir}",
        )  # fmt: skip

        def run(line: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["bash", "-eo", "pipefail", "-c", line], cwd=team, env=env,
                                  capture_output=True, text=True, timeout=600)  # fmt: skip

        first = run(_step(endpoint, "github.event_name == 'pull_request'"))
        assert first.returncode == 0, (first.stdout + first.stderr)[-3000:].replace("\n", " | ")
        assert "no baseline/bfcl-baseline-endpoint.json on main yet" in first.stdout
        main = run(_step(endpoint, "github.event_name == 'push'"))
        assert main.returncode == 0, main.stdout[-3000:]
        recorded = team / "reports" / "bfcl-baseline-endpoint.json"
        assert json.loads(recorded.read_text())["metadata"]["model"] == "test-model"
        # the bar moved by a commit on main; the next pull request is gated against it
        shutil.copy(recorded, team / "baseline" / "bfcl-baseline-endpoint.json")
        subprocess.run(["git", "add", "-A", "baseline"], cwd=team, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bar"],
                       cwd=team, check=True)  # fmt: skip
        subprocess.run(
            ["git", "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=team, check=True
        )
        gated = run(_step(endpoint, "github.event_name == 'pull_request'"))
        assert gated.returncode == 0, gated.stderr[:1500]
        assert "BFCL gate: passed" in gated.stdout and "sequential gate" in gated.stdout
        reports = "".join(p.read_text() for p in (team / "reports").glob("*endpoint*"))
        assert "sk-team-secret-0123456789" not in reports + gated.stdout + main.stdout


def test_the_gpu_job_runs_as_written_with_a_stand_in_vllm(tmp_path, data_source):
    """The job's steps in a copy of the template: the checkpoint checkpoint.txt names (a folder
    on the runner), vLLM started by the plugin (a stand-in serving the ground truth), scores
    only before main has its GPU baseline, then the gate against it."""
    team = tmp_path / "team"
    shutil.copytree(TEMPLATE, team)
    ckpt = tmp_path / "models" / "v12"
    ckpt.mkdir(parents=True)
    (ckpt / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (ckpt / "model.safetensors").write_bytes(b"\0" * 64)
    (team / "checkpoint.txt").write_text(f"{ckpt}\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=team,
                       check=True, capture_output=True)  # fmt: skip

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "template")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pytest").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pytest "$@"\n')
    (bin_dir / "pytest").chmod(0o755)
    github_env = tmp_path / "github_env"
    github_env.write_text("")
    stand_in = f"{sys.executable} -m pytest_bfcl.testing.stand_in_vllm"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GITHUB"))}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHONPATH=str(REPO),
        GITHUB_ENV=str(github_env), STANDIN_CATEGORIES="live_parallel",
        PYTEST_ADDOPTS=f"-p no:cacheprovider --bfcl-category=live_parallel "
        f"--bfcl-data={data_source.data_dir} '--bfcl-vllm-exe={stand_in}'",
    )  # fmt: skip
    gpu = _github()["jobs"]["gpu"]
    assert "{{" not in gpu["env"]["VLLM_ARGS"]
    env["VLLM_ARGS"] = gpu["env"]["VLLM_ARGS"]

    def run(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-eo", "pipefail", "-c", line], cwd=team, env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip

    fetch = next(s["run"] for s in gpu["steps"] if "fetch-checkpoint" in s.get("run", ""))
    assert run(fetch).returncode == 0
    env["CHECKPOINT"] = github_env.read_text().strip().split("=", 1)[1]
    assert env["CHECKPOINT"] == str(ckpt)
    first = run(_step(gpu, "github.event_name == 'pull_request'"))
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    assert "no baseline/bfcl-baseline-gpu.json on main yet" in first.stdout
    assert "vllm" in json.loads((team / "reports" / "bfcl-report-gpu.json").read_text())[
        "metadata"]["model_info"]  # fmt: skip
    main = run(_step(gpu, "github.event_name == 'push'"))
    assert main.returncode == 0, (main.stdout + main.stderr)[-3000:]
    shutil.copy(team / "reports" / "bfcl-baseline-gpu.json", team / "baseline")
    git("add", "-A", "baseline")
    git("commit", "-qm", "the GPU bar")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    gated = run(_step(gpu, "github.event_name == 'pull_request'"))
    assert gated.returncode == 0, (gated.stdout + gated.stderr)[-3000:]
    assert "BFCL gate: passed" in gated.stdout and "sequential gate" in gated.stdout
