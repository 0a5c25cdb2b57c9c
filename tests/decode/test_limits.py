"""The bounds on decoded values (pytest_bfcl/decode/limits.py): JSON text short enough to be
within every bound is not walked (check_json_value), and what is past a bound is refused
whichever way it is checked."""

from __future__ import annotations

import json
import random

import pytest

from pytest_bfcl.decode.errors import DecodeError
from pytest_bfcl.decode.fc import decode_fc_ast
from pytest_bfcl.decode.limits import (
    MAX_DEPTH,
    MAX_INT_BITS,
    check_json_value,
    check_value,
    expanded_size,
)


def _value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth < 130 and roll < 0.35:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 130 and roll < 0.55:
        return {"k" * rng.randint(0, 3): _value(rng, depth + 1) for _ in range(rng.randint(0, 2))}
    if roll < 0.7:
        return "é\\" * rng.randint(0, 4)
    if roll < 0.85:
        return rng.randint(-(10**40), 10**40)
    return rng.choice([True, False, None, 1.5])


def test_short_json_is_within_every_bound_that_check_value_walks():
    """The reason check_json_value may skip the walk, tried on many values: JSON text of at
    most 2 x MAX_DEPTH characters expands to no more elements than characters, and passes."""
    rng = random.Random(3)
    tried = 0
    while tried < 3000:
        text = json.dumps(_value(rng), separators=(",", ":"), ensure_ascii=False)
        if len(text) > 2 * MAX_DEPTH:
            continue
        tried += 1
        value = json.loads(text)
        assert expanded_size(value) <= len(text)
        check_value(value)  # never raises
        check_json_value(value, text)
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH  # the deepest nesting that length allows
    check_value(json.loads(deepest))


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2), "nested more than 100 levels deep"),
        (f'{{"n": {"9" * 4250}}}', "too large to read"),
    ],
    ids=["deep", "long integer"],
)
def test_longer_json_past_a_bound_is_still_refused(text, reason):
    assert len(text) > 2 * MAX_DEPTH
    with pytest.raises(DecodeError, match=reason):
        check_json_value(json.loads(text), text)
    with pytest.raises(DecodeError, match=reason):  # as a model's tool call's arguments
        decode_fc_ast([{"f": text}])
    assert int("9" * 4250).bit_length() > MAX_INT_BITS
