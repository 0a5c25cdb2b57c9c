"""Costs and bounds of the started-server surfaces, on the sizes that matter:

- a local checkpoint's cache identity on a 4 GB folder of weights (two 2 GB safetensors files
  of random bytes, an 11 MB tokenizer), read from disk (the files' pages dropped first): it
  reads a few MB whatever the weights weigh (42 ms measured);
- a server that floods 1 GB without a newline while it should start, against a 25 s start
  timeout: the run ends in time, with a short message, a small log and little memory (29 s,
  1-2 KB, 16 KB, 66-108 MB measured; before, 91 s, a 293 MB line, 1.5 GB).
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path

from pytest_bfcl.servers.checkpoint_identity import checkpoint_files, checkpoint_identity

IDENTITY_MS = 500
FLOOD_TIMEOUT_S = 25
FLOOD_SLACK_S = 20  # the stop's grace and pytest's own start
FLOOD_PEAK_MB = 300


def write_weights(path: Path, size: int) -> None:
    header = json.dumps({"w": {"dtype": "BF16", "shape": [size // 2], "data_offsets": [0, size]}})
    with path.open("wb") as fh:
        fh.write(struct.pack("<Q", len(header)) + header.encode())
        for _ in range(size // (64 << 20)):
            fh.write(os.urandom(64 << 20))


def drop_pages(folder: Path) -> None:
    for path in checkpoint_files(folder):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def test_the_identity_of_a_4_gb_checkpoint_reads_a_few_mb(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    for index in (1, 2):
        write_weights(folder / f"model-0000{index}-of-00002.safetensors", 2 << 30)
    (folder / "model.safetensors.index.json").write_text('{"weight_map": {}}')
    (folder / "tokenizer.json").write_bytes(os.urandom(11 << 20))
    (folder / "config.json").write_text('{"model_type": "qwen2"}')
    drop_pages(folder)
    started = time.perf_counter()
    identity = checkpoint_identity(str(folder))
    elapsed_ms = (time.perf_counter() - started) * 1000
    print(f"identity of a 4 GB checkpoint from disk: {elapsed_ms:.0f} ms ({identity})")
    assert elapsed_ms < IDENTITY_MS


FLOOD = """\
import sys, time
chunk = b"x" * (1 << 20)
for _ in range(1024):
    sys.stdout.buffer.write(chunk)
sys.stdout.buffer.flush()
time.sleep(600)
"""


def test_a_1_gb_flood_without_newlines_keeps_the_start_timeout(tmp_path):
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    log = tmp_path / "server.log"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "--bfcl-model=test-model", "--bfcl-mode=prompt",
         f"--bfcl-server-cmd={sys.executable} {script} {{port}}", f"--bfcl-server-log={log}",
         f"--bfcl-server-startup-timeout={FLOOD_TIMEOUT_S}", "--bfcl-category=live_simple",
         "--bfcl-no-cache", "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    message = done.stdout + done.stderr
    print(
        f"1 GB flood: {elapsed:.1f} s, message {len(message)} bytes, "
        f"log {log.stat().st_size} bytes, peak {peak_mb:.0f} MB"
    )
    assert done.returncode == 4 and f"not healthy after {FLOOD_TIMEOUT_S}s" in message
    assert elapsed < FLOOD_TIMEOUT_S + FLOOD_SLACK_S
    assert len(message) < 20_000 and log.stat().st_size < 1 << 20
    assert peak_mb < FLOOD_PEAK_MB
