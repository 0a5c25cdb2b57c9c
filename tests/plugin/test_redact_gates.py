"""Redaction looks for each kind of secret only where the text holds what it starts from
(pytest_bfcl/redact.py): every failure's text goes through it. The shortcuts must mask exactly
what every pattern applied everywhere masks, and a text of several lines is escaped
(pytest_bfcl/printable.py) as if each of its lines were escaped on its own."""

from __future__ import annotations

import random
import re

import pytest

from pytest_bfcl import printable, redact

PIECES = [
    "a", "-", "--", "_", "=", "&", "?", ";", " ", "\n", "'", '"', ",", "[", ":", "KEY", "key",
    "Token", "sig", "--api-key", "-token", "--hf-token=", "['--api-key', ", "x-api-key: ",
    "Authorization: Basic ", "authorization", "Bearer ", "abcdef12345678", "sk-" + "a" * 22,
    "hf_" + "b" * 31, "ghp_" + "c" * 31, "github_pat_" + "d" * 30, "glpat-" + "d" * 21,
    "xoxb-" + "e" * 11, "AKIA" + "A" * 16, "AIza" + "z" * 35, "https://user:pw@host/",
    "?api_key=", "&token=", "passwd", "credentials", "secret", "apikey", "--max-tokens 5",
]  # fmt: skip


def _every_pattern_everywhere(text: str) -> str:
    text = redact._QUOTED_FLAG_VALUE.sub(redact._mask_quoted_flag, text)
    text = redact._FLAG_VALUE.sub(redact._mask_flag, text)
    text = redact._HEADER.sub(lambda m: f"{m['name']}{m['sep']}{redact.MASK}", text)
    text = redact._BEARER.sub(lambda m: f"{m['head']}{redact.MASK}", text)
    text = redact._KEY_SHAPES.sub(redact.MASK, text)
    text = redact._URL_PASSWORD.sub(lambda m: f"{m['head']}{redact.MASK}", text)
    return redact._QUERY_VALUE.sub(redact._mask_query, text)


@pytest.fixture(autouse=True)
def _no_secret_values(monkeypatch):
    monkeypatch.setattr(redact, "secret_values", lambda: frozenset())


def test_the_shortcuts_mask_what_every_pattern_masks():
    rng = random.Random(7)
    masked = 0
    for _ in range(20_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        assert redact.redact_text(text) == _every_pattern_everywhere(text), text
        masked += redact.redact_text(text) != text
    assert masked > 5_000  # the texts did hold secrets


# What is escaped in a line of a text of several lines: printable.escaped's characters but tabs.
_IN_A_LINE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _line_by_line(text: str, limit: int | None) -> str:
    lines = [
        _IN_A_LINE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
        for line in redact.redact_text(text).replace("\r\n", "\n").split("\n")
    ]
    if limit is not None:
        lines = [line if len(line) <= limit else line[: limit - 3] + "..." for line in lines]
    return "\n".join(lines)


@pytest.mark.parametrize("limit", [None, 6, 2000])
def test_lines_are_escaped_and_cut_as_each_on_its_own(limit):
    rng = random.Random(11)
    pieces = ["ab", "\n", "\r\n", "\r", "\t", "\x00", "\x1b[2J", "\u202e", "\ud800", "é", "\x85"]
    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
        assert printable.printable_lines(text, limit) == _line_by_line(text, limit), repr(text)
