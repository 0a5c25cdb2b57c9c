"""The answers of a baseline's run, kept inside the baseline so that wherever the baseline goes
(committed, fetched from main with ``git show``, kept as an artifact) the answers go too: a
reviewer of a red gate sees what the model answered before beside what it answers now.

They are one JSON object (entry id -> the answer as text) gzip-compressed and base64-encoded
under the baseline's ``answers`` field, which readers that predate it ignore. Each answer is
cut to :data:`ANSWER_LIMIT` characters and all of them to :data:`TOTAL_LIMIT` characters
before compression (:func:`pack_answers`): the oracle's answers on every single-turn and
multi-turn entry (4,441) are 1.25 MB, 212 kB once packed, beside 168 kB of verdicts and stamps
(docs/reports.md); at most, about 5.4 MB. The digest covers verdicts
only (answers decide nothing); a signature covers the whole file, the answers included, so a
signed baseline's answers are the recorded run's.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Mapping
from typing import Any

from pytest_bfcl.files import loads_bounded
from pytest_bfcl.redact import redact_text

ENCODING = "gzip+base64"
ANSWER_LIMIT = 2000  # characters of one answer: what a reviewer reads of it
MIN_ANSWER = 200  # the shortest cut made to keep every entry's answer within the total
TOTAL_LIMIT = 4_000_000  # characters of all answers together, before compression
# What a stored payload may expand to (the caps above, with the JSON's escapes): a larger one
# is no payload this module wrote.
_EXPANDED_LIMIT = 8 * TOTAL_LIMIT
_MAX_DEPTH = 8
NO_ANSWERS = (
    "the baseline holds no answers (recorded before baselines kept them, or merged from "
    "baselines without them); record it again with --bfcl-save-baseline to see them"
)


def cut_answer(text: str, limit: int = ANSWER_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown_answer(text: str) -> str:
    """A stored answer as a report shows it: cut to :data:`ANSWER_LIMIT`, secrets masked,
    lone surrogates escaped (every writer can encode it)."""
    masked = redact_text(cut_answer(text))
    return masked.encode("utf-8", "backslashreplace").decode("utf-8")


def pack_answers(answers: Mapping[str, str]) -> dict[str, Any]:
    """The baseline's ``answers`` field: every answer cut to :data:`ANSWER_LIMIT`; when they
    add up to more than :data:`TOTAL_LIMIT`, every answer is cut shorter (to no less than
    :data:`MIN_ANSWER`) so that each entry keeps one, and only past that are the last entries
    (in id order) left out and counted."""
    limit = _shared_limit([len(str(text)) for text in answers.values()])
    kept: dict[str, str] = {}
    used = 0
    for entry_id in sorted(answers):
        text = cut_answer(str(answers[entry_id]), limit)
        if used + len(text) > TOTAL_LIMIT:
            break
        kept[entry_id] = text
        used += len(text)
    payload = json.dumps(kept, ensure_ascii=False, separators=(",", ":"))
    # gzip's format (wbits 31) through a compressor object: zlib.compress takes wbits from
    # Python 3.11 only
    gzipper = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = gzipper.compress(payload.encode("utf-8", "surrogatepass")) + gzipper.flush()
    return {
        "encoding": ENCODING,
        "entries": len(kept),
        "left_out": len(answers) - len(kept),
        "answer_limit": limit,
        "data": base64.b64encode(packed).decode("ascii"),
    }


def _shared_limit(lengths: list[int]) -> int:
    """The longest cut of each answer that keeps them all within :data:`TOTAL_LIMIT`."""
    low, high = MIN_ANSWER, ANSWER_LIMIT
    if sum(min(n, high) for n in lengths) <= TOTAL_LIMIT:
        return high
    while low < high:  # the largest limit that fits, or MIN_ANSWER
        middle = (low + high + 1) // 2
        if sum(min(n, middle) for n in lengths) <= TOTAL_LIMIT:
            low = middle
        else:
            high = middle - 1
    return low


class BaselineAnswers:
    """A baseline's answers, read once when first asked for; ``why_none`` says why there are
    none (no ``answers`` field, or one that cannot be read)."""

    def __init__(self, field: Any) -> None:
        self._field = field
        self._answers: dict[str, str] | None = None
        self._shown: dict[str, str] = {}
        self.why_none: str | None = None

    @classmethod
    def of(cls, baseline: Any) -> BaselineAnswers:
        """The answers of a :class:`~pytest_bfcl.gate.Baseline` (or of none)."""
        return cls(getattr(baseline, "answers", None) if baseline is not None else None)

    def _read(self) -> dict[str, str]:
        if self._answers is None:
            try:
                self._answers = unpack_answers(self._field)
            except ValueError as exc:
                self._answers, self.why_none = {}, str(exc)
            else:
                if self._field is None:
                    self.why_none = NO_ANSWERS
        return self._answers

    def count(self) -> int:
        return len(self._read())

    def get(self, entry_id: str) -> str | None:
        """An entry's answer as every report shows it: at most :data:`ANSWER_LIMIT`
        characters, secrets masked, lone surrogates escaped (a baseline is anyone's file:
        edited, merged, or recorded before keys were masked in answers)."""
        shown = self._shown.get(entry_id)
        if shown is None:
            text = self._read().get(entry_id)
            if text is None:
                return None
            shown = self._shown[entry_id] = shown_answer(text)
        return shown

    def all(self) -> dict[str, str]:
        return self._read()

    def missing(self, entry_id: str) -> str:
        """Why ``entry_id`` has no answer here."""
        self._read()
        if self.why_none is not None:
            return self.why_none
        left_out = self._field.get("left_out") if isinstance(self._field, dict) else 0
        if left_out:
            return f"left out of the baseline's answers ({left_out} were, past the size limit)"
        return "the baseline's run has no answer for it (it was not scored there)"


def unpack_answers(field: Any) -> dict[str, str]:
    """The answers of a baseline's ``answers`` field (none when it has none); a field this
    module did not write is a :class:`ValueError` saying what is wrong with it."""
    if field is None:
        return {}
    if not isinstance(field, dict) or field.get("encoding") != ENCODING:
        return _refused(f"its encoding is not {ENCODING!r}")
    data = field.get("data")
    if not isinstance(data, str):
        return _refused("it has no data")
    try:
        packed = base64.b64decode(data, validate=True)
        unpacker = zlib.decompressobj(wbits=31)
        payload = unpacker.decompress(packed, _EXPANDED_LIMIT)
    except (binascii.Error, zlib.error) as exc:
        return _refused(f"{type(exc).__name__}: {exc}")
    if unpacker.unconsumed_tail:
        return _refused(f"they expand past {_EXPANDED_LIMIT:,} bytes")
    try:
        # A table of texts is two deep; a deeper payload would only spend the stack.
        answers = loads_bounded(payload.decode("utf-8", "surrogatepass"), _MAX_DEPTH)
    except (UnicodeDecodeError, ValueError) as exc:
        return _refused(f"{type(exc).__name__}: {exc}")
    if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
        return _refused("they are not a table of entry ids and texts")
    return answers


def _refused(why: str) -> dict[str, str]:
    raise ValueError(f"the baseline's answers cannot be read ({why}); its verdicts still gate")


def merged_answers(
    answers: list[BaselineAnswers], verdicts: list[Mapping[str, bool]], merged: Mapping[str, bool]
) -> dict[str, str]:
    """The answers of a merged baseline: per entry, that of the first run whose verdict is the
    merged one (an entry failed in some run shows a failing answer), else the first there is."""
    out: dict[str, str] = {}
    for entry_id, valid in merged.items():
        fallback = None
        for store, run in zip(answers, verdicts, strict=True):
            text = store.get(entry_id)
            if text is None:
                continue
            if run.get(entry_id) == valid:
                out[entry_id] = text
                break
            fallback = fallback if fallback is not None else text
        else:
            if fallback is not None:
                out[entry_id] = fallback
    return out
