"""The simulated prefix cache of the test server (what the replica benchmark measures with): a
request pays the prefill of what that replica has not seen, block by block from the start."""

from __future__ import annotations

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
