"""The simulated prefix cache of the test server (what the replica benchmark measures with): a
request pays the prefill of what that replica has not seen, block by block from the start."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.testing.prefix_cache import BLOCK_CHARS, PrefixCache, rendered_prompt

TOOLS = [{"type": "function", "function": {"name": "cd", "description": "x" * 2000}}]


def step(*contents: str) -> dict:
    return {"tools": TOOLS, "messages": [{"role": "user", "content": c} for c in contents]}


def test_the_next_step_of_a_conversation_pays_only_for_what_it_adds():
    cache = PrefixCache(per_char=1.0)  # one second a character: the cost is the count
    first, second = step("a" * 500), step("a" * 500, "b" * 700)
    assert cache.prefill_seconds(first) == len(rendered_prompt(first))
    unseen = cache.prefill_seconds(second)
    added = len(rendered_prompt(second)) - len(rendered_prompt(first))
    assert added <= unseen < added + 2 * BLOCK_CHARS  # the partial last block is paid again
    assert cache.cached_chars == len(rendered_prompt(second)) - unseen


def test_another_replica_and_another_history_pay_again():
    one, other = PrefixCache(per_char=1.0), PrefixCache(per_char=1.0)
    one.prefill_seconds(step("a" * 500))
    assert other.prefill_seconds(step("a" * 500)) == len(rendered_prompt(step("a" * 500)))
    # the same tools with another first message: only the tools are cached
    different = one.prefill_seconds(step("c" * 500))
    assert different == pytest.approx(
        len(rendered_prompt(step("c" * 500)))
        - len(rendered_prompt({"tools": TOOLS, "messages": []})),
        abs=2 * BLOCK_CHARS,
    )


def test_the_least_recently_used_blocks_go_first():
    cache = PrefixCache(blocks=10, per_char=1.0)
    cache.prefill_seconds(step("a" * 5000))  # far more than ten blocks
    assert cache.prefill_seconds(step("a" * 5000)) > 0  # its first blocks were forgotten


def test_what_the_replica_generated_is_cached_with_the_prompt():
    generated = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a1", "type": "function", "function": {"name": "cd", "arguments": "{}"}}
        ],
    }
    resent = {**generated, "tool_calls": [{**generated["tool_calls"][0], "id": "b7"}]}
    result = {"role": "tool", "tool_call_id": "b7", "content": "y" * 300}
    first = step("a" * 500)
    nxt = {"tools": TOOLS, "messages": [*first["messages"], resent, result]}
    kept, other = PrefixCache(per_char=1.0), PrefixCache(per_char=1.0)
    for cache in (kept, other):
        cache.prefill_seconds(first)
    kept.keep_answer(first, generated)
    added = len(rendered_prompt(nxt)) - len(rendered_prompt(first))
    # where it was generated the answer is cached (the client's ids for the calls aside) and
    # only the tool's result is new; elsewhere the answer is paid for as well
    assert (
        kept.prefill_seconds(nxt) < len("\n" + json.dumps(result, sort_keys=True)) + 2 * BLOCK_CHARS
    )
    assert other.prefill_seconds(nxt) >= added
    assert kept.prompt_chars == other.prompt_chars  # what was generated is not counted as sent
