"""Write a GGUF checkpoint out as a plain Hugging Face model folder that ``vllm serve`` loads
offline: config, tokenizer (with its chat template) and safetensors weights.

usage: python gguf_to_hf.py GGUF_FILE OUT_DIR

Runs in the vLLM virtualenv (transformers and torch come with vLLM; ``gguf`` and
``accelerate`` are installed beside them). transformers dequantizes the GGUF tensors on load;
the folder is written to a temporary name and renamed, so an interrupted conversion leaves no
half-written model behind.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    # The tensors are plain floats after loading; transformers still marks the model as
    # GGUF-quantized, and that marker refuses save_pretrained.
    model.hf_quantizer = None
    for holder in (model, model.config):
        if hasattr(holder, "quantization_config"):
            delattr(holder, "quantization_config")
    model.is_quantized = False
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    if not tokenizer.chat_template:
        raise SystemExit(f"{gguf}: the checkpoint carries no chat template")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    gguf, out = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    if not gguf.is_file():
        print(f"no GGUF file at {gguf}", file=sys.stderr)
        return 2
    convert(gguf, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
