"""The completions route (``--bfcl-leaderboard-model`` naming an open-weight entry) on servers
the plugin starts: ``vllm:`` (the stand-in executable, serving ``/v1/completions``) and
``--bfcl-server-cmd`` ask exactly what the base-URL route asks for the same entries (prompts,
temperature, max_tokens, through a conversation), under ``-n 2`` one server serves both
workers, a rerun answered from the cache starts none, vLLM is started without the
tool-calling switch, and ``vllm:FOLDER`` counts prompt tokens with the folder's tokenizer."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from pytest_bfcl.handlers.tokens import max_tokens_for
from pytest_bfcl.testing.completions_server import (
    CompletionsServer,
    answer_from_prompt,
    recorded,
)
from pytest_bfcl.testing.stand_in_vllm import starts_recorded

STAND_IN = f"{sys.executable} -m pytest_bfcl.testing.stand_in_vllm"
LEADERBOARD_MODEL = "Qwen/Qwen3-8B-FC"
SELECTED = (
    "bfcl/simple_python::simple_python_0",
    "bfcl/simple_python::simple_python_1",
    "bfcl/multi_turn_base::multi_turn_base_0",
)


@pytest.fixture
def checkpoint(pytester):
    """A checkpoint folder whose tokenizer counts words and punctuation, in a 5,000 window."""
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = pytester.path / "checkpoint"
    folder.mkdir()
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 5000}))
    return folder, tokenizer


@pytest.fixture
def stand_in(monkeypatch, tmp_path) -> Path:
    """The stand-in vLLM serving /v1/completions; its starts counted in the file returned."""
    starts = tmp_path / "starts.txt"
    monkeypatch.setenv("STANDIN_STARTS", str(starts))
    monkeypatch.setenv("STANDIN_ROUTE", "completions")
    monkeypatch.setenv("STANDIN_REQUESTS", str(tmp_path / "requests.jsonl"))
    return starts


def _run(pytester, tmp_path: Path, name: str, *args: str):
    report = tmp_path / f"{name}.json"
    result = pytester.runpytest_subprocess(
        f"--bfcl-leaderboard-model={LEADERBOARD_MODEL}",
        "--bfcl-category=simple_python,multi_turn_base",
        f"--bfcl-report={report}",
        "--bfcl-retries=1",
        "-p",
        "no:cacheprovider",
        *args,
        *SELECTED,
    )
    meta = json.loads(report.read_text())["metadata"] if report.exists() else {}
    return result, meta


def _sorted(bodies: list[dict]) -> list[str]:
    return sorted(json.dumps(b, sort_keys=True) for b in bodies)


def _base_url_requests(pytester, tmp_path, model: str = "test-model", *extra: str) -> list:
    """What the base-URL route asks for the selected entries (no cache)."""
    with CompletionsServer(answer_from_prompt, model) as server:
        result, meta = _run(
            pytester,
            tmp_path,
            "base-url",
            f"--bfcl-model={model}",
            f"--bfcl-base-url={server.base_url}",
            "--bfcl-no-cache",
            *extra,
        )
    assert meta["wire_format"] == "completions:qwen-fc", result.stdout.str()[-3000:]
    # a conversation of several steps besides the two single-turn entries
    assert len(server.requests) > len(SELECTED)
    return server.requests


def _outcomes(result) -> dict[str, int]:
    outcomes = result.parseoutcomes()
    return {k: v for k, v in outcomes.items() if k in ("passed", "failed", "error")}


def test_server_cmd_asks_what_the_base_url_route_asks(pytester, tmp_path):
    base_url_requests = _base_url_requests(pytester, tmp_path)
    record = tmp_path / "server-cmd.jsonl"
    command = (
        f"{sys.executable} -m pytest_bfcl.testing.completions_server --port {{port}} "
        f"--record {record}"
    )
    result, meta = _run(
        pytester,
        tmp_path,
        "server-cmd",
        "--bfcl-model=test-model",
        f"--bfcl-server-cmd={command}",
        f"--bfcl-server-log={tmp_path / 'server.log'}",
        "--bfcl-no-cache",
    )
    out = result.stdout.str()
    assert "error" not in _outcomes(result), out[-3000:]
    assert _sorted(recorded(record)) == _sorted(base_url_requests)
    assert recorded(record, "tokenize")  # the server counted the prompts' tokens
    assert meta["wire_format"] == "completions:qwen-fc"
    info = meta["model_info"]
    assert info["kind"] == "started-server" and info["handler"]["family"] == "qwen-fc"
    assert info["handler"]["tokens"] == "the server's /tokenize"
    assert (
        "completions route: prompts rendered as the leaderboard's qwen-fc handler renders them, "
        "asked on /v1/completions; prompt tokens counted by the server's /tokenize; on the "
        "server --bfcl-server-cmd starts"
    ) in out


@pytest.mark.extra("handlers")
def test_vllm_under_xdist_starts_one_server_and_asks_what_the_base_url_route_asks(
    pytester, tmp_path, stand_in, checkpoint
):
    """A checkpoint folder's tokenizer counts the prompts here: a cached rerun needs no
    server at all."""
    folder, _ = checkpoint
    base_url_requests = _base_url_requests(
        pytester, tmp_path, folder.name, f"--bfcl-tokenizer={folder}"
    )
    common = (
        f"--bfcl-model=vllm:{folder}",
        f"--bfcl-vllm-exe={STAND_IN}",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
        "-n",
        "2",
    )
    first, meta = _run(
        pytester, tmp_path, "first", *common, f"--bfcl-vllm-log={tmp_path / 'first.log'}"
    )
    out = first.stdout.str()
    assert "error" not in _outcomes(first), out[-3000:]
    assert starts_recorded(stand_in) == 1  # the controller's server, shared by both workers
    assert _sorted(recorded(tmp_path / "requests.jsonl")) == _sorted(base_url_requests)
    vllm = meta["model_info"]["vllm"]
    assert vllm["started"] and meta["wire_format"] == "completions:qwen-fc"
    # function-calling mode, and yet no tool-calling switch: the prompt holds the tools
    assert meta["mode"] == "fc"
    assert "--enable-auto-tool-choice" not in vllm["command"]
    assert (
        f"prompt tokens counted by tokenizer {folder}; vLLM started without "
        "--enable-auto-tool-choice, a tool-call parser or a chat template of the plugin's\n"
    ) in out
    log = (tmp_path / "first.log").read_text()
    assert "flags=[]" in log  # the stand-in prints the flags it was given beyond its own
    # answered from the cache: no server, the same verdicts
    again, meta = _run(
        pytester, tmp_path, "again", *common, f"--bfcl-vllm-log={tmp_path / 'again.log'}"
    )
    assert _outcomes(again) == _outcomes(first), again.stdout.str()[-3000:]
    assert starts_recorded(stand_in) == 1 and meta["model_info"]["vllm"]["started"] is False
    assert not (tmp_path / "again.log").exists()


def test_server_counted_tokens_start_the_server_when_first_counted(pytester, tmp_path, stand_in):
    """Without a tokenizer folder the started server counts the prompt's tokens (its
    /tokenize): it starts at the first count, before any completion is asked."""
    result, meta = _run(
        pytester,
        tmp_path,
        "counted",
        "--bfcl-model=vllm:test-model",
        f"--bfcl-vllm-exe={STAND_IN}",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
    )
    assert "error" not in _outcomes(result), result.stdout.str()[-3000:]
    assert starts_recorded(stand_in) == 1 and recorded(tmp_path / "requests.jsonl", "tokenize")
    assert meta["model_info"]["handler"]["tokens"] == "the server's /tokenize"
    assert "(it starts to count tokens even when the cache answers" in result.stdout.str()


def test_server_cmd_under_xdist_starts_one_server(pytester, tmp_path, stand_in):
    command = f"{STAND_IN} serve test-model --host 127.0.0.1 --port {{port}}"
    result, meta = _run(
        pytester,
        tmp_path,
        "xdist",
        "--bfcl-model=test-model",
        f"--bfcl-server-cmd={command}",
        f"--bfcl-server-log={tmp_path / 'server.log'}",
        "--bfcl-no-cache",
        "-n",
        "2",
    )
    assert "error" not in _outcomes(result), result.stdout.str()[-3000:]
    assert starts_recorded(stand_in) == 1
    assert len(recorded(tmp_path / "requests.jsonl")) > len(SELECTED)
    assert meta["model_info"]["kind"] == "started-server"


def test_the_cache_key_names_the_route_and_the_family(pytester, tmp_path, stand_in):
    """The same server and checkpoint asked as another family's handler is asked again."""
    common = (
        "--bfcl-model=vllm:test-model",
        f"--bfcl-vllm-exe={STAND_IN}",
        f"--bfcl-cache-dir={tmp_path / 'cache'}",
    )
    _run(pytester, tmp_path, "fc", *common)
    asked = len(recorded(tmp_path / "requests.jsonl"))
    assert starts_recorded(stand_in) == 1 and asked
    _run(pytester, tmp_path, "prompt", *common, "--bfcl-leaderboard-model=Qwen/Qwen3-8B")
    assert starts_recorded(stand_in) == 2 and len(recorded(tmp_path / "requests.jsonl")) > asked


@pytest.mark.extra("handlers")
def test_a_vllm_checkpoint_folder_counts_the_prompt_with_its_tokenizer(
    pytester, tmp_path, stand_in, checkpoint
):
    folder, tokenizer = checkpoint
    result, meta = _run(
        pytester,
        tmp_path,
        "folder",
        f"--bfcl-model=vllm:{folder}",
        f"--bfcl-vllm-exe={STAND_IN}",
        "--bfcl-no-cache",
    )
    assert "error" not in _outcomes(result), result.stdout.str()[-3000:]
    requests = recorded(tmp_path / "requests.jsonl")
    assert requests and recorded(tmp_path / "requests.jsonl", "tokenize") == []
    for body in requests:
        assert body["model"] == "checkpoint"  # served under the folder's name
        count = len(tokenizer.encode(body["prompt"], add_special_tokens=False).ids)
        assert body["max_tokens"] == max_tokens_for(count, 5000)
    assert meta["model_info"]["handler"]["tokens"] == f"tokenizer {folder}"


@pytest.mark.parametrize(
    ("leaderboard_model", "route"),
    [("Qwen/Qwen3-8B-FC", "completions:qwen-fc"), ("Qwen/Qwen3-8B", "completions:qwen")],
)
def test_the_cache_identity_holds_the_route_the_family_and_the_served_inputs(
    tmp_path, leaderboard_model, route
):
    from pytest_bfcl.run.engine import BfclRun
    from pytest_bfcl.servers.vllm_server import VllmCompletionsModel
    from pytest_bfcl.settings import Settings

    settings = Settings(
        model="vllm:test-model",
        vllm_exe=STAND_IN,
        vllm_args="--max-model-len 4096",
        leaderboard_model=leaderboard_model,
        categories=["simple_python"],
        cache_dir=tmp_path / "cache",
    )
    model = BfclRun.create(settings).model.model  # the built-in model, within its defaults
    try:
        assert isinstance(model, VllmCompletionsModel) and not model.started
        identity = model.cache_identity({"prompt": "p"}, entry="simple_python_0")
        assert identity["route"] == route
        assert identity["identity"].startswith("vllm:test-model --max-model-len 4096")
        assert model.metadata()["kind"] == "vllm"
        assert model.metadata()["wire_format"] == route
    finally:
        model.close()


@pytest.mark.extra("handlers")
def test_a_vllm_checkpoint_folder_gives_its_chat_template_to_a_family_that_renders_with_it(
    pytester, tmp_path, stand_in
):
    """Falcon 3's handler renders with the checkpoint's own chat template: ``vllm:FOLDER``
    gives it the folder's, as ``--bfcl-tokenizer`` would."""
    folder = pytester.path / "falcon3"
    shutil.copytree(Path(__file__).parents[1] / "data/handlers/falcon3", folder)
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 32768}))
    result, meta = _run(
        pytester,
        tmp_path,
        "falcon",
        f"--bfcl-model=vllm:{folder}",
        f"--bfcl-vllm-exe={STAND_IN}",
        "--bfcl-leaderboard-model=tiiuae/Falcon3-7B-Instruct-FC",
        "--bfcl-no-cache",
    )
    assert "error" not in _outcomes(result), result.stdout.str()[-3000:]
    assert meta["wire_format"] == "completions:falcon-3"
    prompts = [body["prompt"] for body in recorded(tmp_path / "requests.jsonl")]
    # the template's own markup, ending where the assistant's answer starts
    assert prompts and all(p.startswith("<|system|>") for p in prompts), prompts[:1]
    assert all(p.endswith("<|assistant|>\n") for p in prompts), prompts[:1]
