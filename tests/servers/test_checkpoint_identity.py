"""A local checkpoint's cache identity is its bytes: two spellings of one folder share it; new
weights (same names and sizes), a new tokenizer or template, or a new file do not."""

from __future__ import annotations

import json
import os
import struct

import pytest

from pytest_bfcl.servers import checkpoint_identity as rule
from pytest_bfcl.servers.checkpoint_identity import checkpoint_identity, sample_offsets


def safetensors(size: int, fill: bytes = b"\1") -> bytes:
    """A file in the safetensors layout: the header's length, the header, the tensor's bytes."""
    header = json.dumps({"w": {"dtype": "U8", "shape": [size], "data_offsets": [0, size]}})
    body = header.encode()
    return struct.pack("<Q", len(body)) + body + fill * size


@pytest.fixture
def checkpoint(tmp_path, monkeypatch):
    """A checkpoint whose weights count as large (sampled), with a small limit to keep it
    quick: 3 MB of weights against a 1 MB limit."""
    monkeypatch.setattr(rule, "WHOLE_FILE_LIMIT", 1 << 20)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "qwen2"}')
    (folder / "tokenizer.json").write_text('{"vocab": {"a": 1}}')
    (folder / "chat_template.jinja").write_text("{{ messages }}")
    (folder / "model.safetensors").write_bytes(safetensors(3 << 20))
    monkeypatch.chdir(tmp_path)
    return folder


def test_two_spellings_of_a_checkpoint_share_an_identity(checkpoint):
    first = checkpoint_identity("ckpt")
    assert first == checkpoint_identity(str(checkpoint)) == checkpoint_identity("./ckpt/")
    assert first.startswith(str(checkpoint.resolve()) + "@")
    assert checkpoint_identity("Qwen/Qwen2.5-7B-Instruct") == "Qwen/Qwen2.5-7B-Instruct"


def test_retrained_weights_of_the_same_size_and_time_are_a_new_identity(checkpoint):
    """Every byte new, the modification time put back: the sampled blocks tell."""
    weights = checkpoint / "model.safetensors"
    first = checkpoint_identity("ckpt")
    stat = weights.stat()
    weights.write_bytes(safetensors(3 << 20, fill=b"\2"))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert weights.stat().st_size == stat.st_size
    assert checkpoint_identity("ckpt") != first


def test_weights_rewritten_in_one_place_are_a_new_identity_by_their_time(checkpoint):
    """A change between the sampled blocks (a few tensors fine-tuned) shows in the file's
    modification time."""
    weights = checkpoint / "model.safetensors"
    first = checkpoint_identity("ckpt")
    offsets = sample_offsets(weights.stat().st_size)
    between = offsets[1] + rule.SAMPLE_BYTES + 10
    assert between < offsets[2]
    with weights.open("r+b") as fh:
        fh.seek(between)
        fh.write(b"\3")
    os.utime(weights, ns=(0, weights.stat().st_mtime_ns + 1_000_000_000))
    assert checkpoint_identity("ckpt") != first


@pytest.mark.parametrize("name", ["tokenizer.json", "chat_template.jinja", "config.json"])
def test_a_new_tokenizer_template_or_config_of_the_same_size_is_a_new_identity(checkpoint, name):
    path = checkpoint / name
    first = checkpoint_identity("ckpt")
    stat = path.stat()
    text = path.read_text()
    path.write_text(text.replace("a", "b").replace("m", "n"))  # same size, new content
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert checkpoint_identity("ckpt") != first


def test_a_new_file_counts_documentation_and_hidden_files_do_not(checkpoint):
    first = checkpoint_identity("ckpt")
    (checkpoint / "README.md").write_text("a model card")
    (checkpoint / ".cache").mkdir()
    (checkpoint / ".cache" / "lock").write_text("x")
    assert checkpoint_identity("ckpt") == first
    (checkpoint / "tokenizer_config.json").write_text("{}")
    second = checkpoint_identity("ckpt")
    assert second != first
    (checkpoint / "original").mkdir()  # files in a subfolder count too
    (checkpoint / "original" / "params.json").write_text("{}")
    assert checkpoint_identity("ckpt") != second


def test_samples_cover_the_file_from_start_to_end():
    size = 10 << 20
    offsets = sample_offsets(size)
    assert offsets[0] == 0 and offsets[-1] == size - rule.SAMPLE_BYTES
    assert len(offsets) == rule.SAMPLES
    assert sample_offsets(100) == [0]  # a file smaller than a block: read once
