"""The nesting depth found before a JSON text is parsed (``files.json_depth``): the same as the
parsed value's, whatever its strings hold (escaped quotes and backslashes, brackets)."""

from __future__ import annotations

import json
import random

import pytest

from pytest_bfcl.files import json_depth, loads_bounded

# Strings that would fool a scan that does not follow JSON's escapes.
TRICKY = ['"', "\\", '\\"', "[", "]]}", '{"', "\\\\[", "é", "\ud800", "\n", ""]


def _depth(value):
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _random_value(rng, depth):
    pick = rng.random()
    if depth > 6 or pick < 0.3:
        return rng.choice([*TRICKY, 1, None, True])
    if pick < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(TRICKY) + str(i): _random_value(rng, depth + 1) for i in range(3)}


@pytest.mark.parametrize("seed", range(200))
def test_the_depth_is_the_parsed_values(seed):
    value = _random_value(random.Random(seed), 0)
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        assert json_depth(text) == _depth(value), text


def test_a_long_string_of_escaped_quotes_holds_no_bracket():
    text = json.dumps({"pad": '"[' * 100_000})
    assert json_depth(text) == 1 and loads_bounded(text, 1) == {"pad": '"[' * 100_000}


def test_brackets_past_the_limit_are_refused_before_parsing():
    with pytest.raises(ValueError, match="nested 100 deep"):
        loads_bounded("[" * 100 + "]" * 100, 64)
