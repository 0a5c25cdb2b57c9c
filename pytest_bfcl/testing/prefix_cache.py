"""A simulated prefix cache, as a vLLM replica keeps one (automatic prefix caching): the prompt
is cut into blocks, each block known by a hash of everything before it and itself, and a
request's prefill covers only the blocks after the longest prefix the replica has seen.

The prompt is rendered as a chat template would lay it out: the tools, then each message in
order, so the next step of a conversation extends the previous step's prompt. The cost of a
request is then ``per_char`` seconds for each prompt character the replica has not seen (the
prefill it cannot skip). Counted: prompt characters sent and characters found in the cache
(the hit ratio is their quotient).

What the replica generated is cached with the prompt (vLLM keeps the blocks of the generated
tokens as it keeps the prompt's): the answer, rendered as the template renders an assistant
message (its text and its calls' names and arguments; the ids a client gives the calls are not
part of it), extends the prompt's blocks. The next step of the conversation, which resends
that answer, finds it cached on the replica that generated it, and nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

BLOCK_CHARS = 64  # about 16 tokens, vLLM's block size
PER_CHAR_S = 0.010 / 1000  # 10 ms of prefill per 1,000 characters not cached


def rendered_message(message: dict[str, Any]) -> str:
    """A message as a chat template lays it out; an assistant message as what was generated:
    its text and its calls' names and arguments."""
    if message.get("role") != "assistant":
        return json.dumps(message, sort_keys=True)
    calls = [
        [call.get("function", {}).get("name"), call.get("function", {}).get("arguments")]
        for call in message.get("tool_calls") or []
    ]
    generated = {"role": "assistant", "content": message.get("content") or None}
    generated["tool_calls"] = calls or None
    return json.dumps(generated, sort_keys=True)


def rendered_prompt(body: dict[str, Any]) -> str:
    """The prompt a chat template makes of a request: tools first, then the messages."""
    parts = [json.dumps(body.get("tools") or [], sort_keys=True)]
    parts += [rendered_message(m) for m in body.get("messages", [])]
    return "\n".join(parts)


class PrefixCache:
    """One replica's cache of prompt blocks, least recently used forgotten first."""

    def __init__(self, blocks: int = 1_000_000, per_char: float = PER_CHAR_S) -> None:
        self.capacity = blocks
        self.per_char = per_char
        self._blocks: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()
        self.prompt_chars = 0
        self.cached_chars = 0

    def prefill_seconds(self, body: dict[str, Any]) -> float:
        """The prefill this request costs here (its blocks are cached from now on)."""
        prompt = rendered_prompt(body)
        with self._lock:
            hit = self._cache(prompt)
            self.prompt_chars += len(prompt)
            self.cached_chars += hit
        return (len(prompt) - hit) * self.per_char

    def keep_answer(self, body: dict[str, Any], message: dict[str, Any]) -> None:
        """Cache what was generated for this request with its prompt (not counted as sent)."""
        with self._lock:
            self._cache(rendered_prompt(body) + "\n" + rendered_message(message))

    def _cache(self, text: str) -> int:
        """Cache the text's full blocks; how many of its characters were cached already (the
        longest prefix of whole blocks)."""
        digest = hashlib.blake2b(digest_size=16)
        hit, matching = 0, True
        for start in range(0, len(text) - BLOCK_CHARS + 1, BLOCK_CHARS):
            digest.update(text[start : start + BLOCK_CHARS].encode())
            key = digest.digest()
            if matching and key in self._blocks:
                hit += BLOCK_CHARS
                self._blocks.move_to_end(key)
                continue
            matching = False
            self._blocks[key] = None
        while len(self._blocks) > self.capacity:
            self._blocks.popitem(last=False)
        return hit

    def counts(self) -> dict[str, int]:
        return {"prompt_chars": self.prompt_chars, "cached_chars": self.cached_chars}
