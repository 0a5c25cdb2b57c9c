"""The cache identity of a local checkpoint (``vllm:PATH``): its resolved path and a digest of
its bytes, cheap enough to take at every start.

The rule, file by file (every file under the folder except hidden ones and documentation):

- its path inside the folder and its size;
- a file up to :data:`WHOLE_FILE_LIMIT` (config, tokenizer, chat template, generation config,
  a safetensors index): a hash of its whole content;
- a larger one (the weights): its modification time, the safetensors header (the tensors'
  names, types, shapes and offsets) when it is one, and :data:`SAMPLES` blocks of
  :data:`SAMPLE_BYTES` spread evenly over the file.

So a checkpoint written over the same folder (a retrained one: same names, same sizes, new
bytes) has a new identity from its weights' modification times and sampled bytes, and one whose
tokenizer or template changed from their content; a copy that keeps the modification times
(``cp -p``, ``rsync -a``) keeps the identity. A few MB are read whatever the weights weigh.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path
from typing import BinaryIO

from pytest_bfcl.files import open_regular_file

WHOLE_FILE_LIMIT = 32 << 20  # bytes; tokenizers reach 10-35 MB, weights are larger
SAMPLES = 16  # blocks read from each larger file
SAMPLE_BYTES = 64 << 10
SAFETENSORS_HEADER_LIMIT = 100 << 20  # the format's own bound on its JSON header

_DOCUMENTATION = (".md", ".rst")
_DOCUMENT_NAMES = ("license", "notice", "use_policy")


def checkpoint_identity(model: str) -> str:
    """A local checkpoint's identity, ``RESOLVED_PATH@DIGEST`` (two spellings of one folder
    share it); a hub name is its own identity."""
    folder = Path(model).expanduser()
    if not folder.is_dir():
        return model
    folder = folder.resolve()
    digest = hashlib.sha256()
    for path in checkpoint_files(folder):
        digest.update(file_identity(path, path.relative_to(folder).as_posix()))
    return f"{folder}@{digest.hexdigest()[:16]}"


def checkpoint_files(folder: Path) -> list[Path]:
    """The files that count, in a stable order: everything but hidden files and folders
    (``.git``, ``.cache``) and documentation (README, LICENSE)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            lower = name.lower()
            if name.startswith(".") or lower.endswith(_DOCUMENTATION):
                continue
            if lower.startswith(_DOCUMENT_NAMES):
                continue
            found.append(Path(root) / name)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def file_identity(path: Path, name: str) -> bytes:
    """What one file contributes to the digest (see the module's rule); a file that cannot be
    read contributes its name and why."""
    try:
        with open_regular_file(path) as fh:  # a FIFO there would hang the run, a device never end
            stat = os.fstat(fh.fileno())
            head = f"{name}\0{stat.st_size}\0".encode()
            if stat.st_size <= WHOLE_FILE_LIMIT:
                return head + hashlib.sha256(fh.read()).digest()
            content = hashlib.sha256(str(stat.st_mtime_ns).encode())
            if name.endswith(".safetensors"):
                content.update(_safetensors_header(fh, stat.st_size))
            for offset in sample_offsets(stat.st_size):
                fh.seek(offset)
                content.update(fh.read(SAMPLE_BYTES))
            return head + content.digest()
    except OSError as exc:
        return f"{name}\0unreadable {type(exc).__name__}\n".encode()


def sample_offsets(size: int) -> list[int]:
    """Where the sampled blocks of a file of ``size`` bytes start: the first at 0, the last
    ending at the end, the others evenly between."""
    last = max(size - SAMPLE_BYTES, 0)
    return sorted({last * i // (SAMPLES - 1) for i in range(SAMPLES)})


def _safetensors_header(fh: BinaryIO, size: int) -> bytes:
    """The JSON header of a safetensors file (8 bytes of length, then the header); what the
    first bytes say, bounded, when they are not a plausible length."""
    fh.seek(0)
    prefix = fh.read(8)
    if len(prefix) < 8:
        return prefix
    (length,) = struct.unpack("<Q", prefix)
    if length > min(SAFETENSORS_HEADER_LIMIT, size - 8):
        return prefix
    return prefix + fh.read(length)
