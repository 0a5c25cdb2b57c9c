"""The long-context tables (extra files, stocks, weather, cities...) that the long-context
category adds to the backends. They belong to the benchmark, so they are read at run time from
the pinned distribution's source file by static parsing (:mod:`ast`), never imported or copied."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.fetch import DatasetError
from pytest_bfcl.dataset.texts import module_constants

LONG_CONTEXT_FILE = "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py"

_NAMES = (
    "WATCH_LIST_EXTENSION",
    "TRANSACTION_HISTORY_EXTENSION",
    "MA_5_EXTENSION",
    "MA_20_EXTENSION",
    "TECHNOLOGY_EXTENSION",
    "AUTOMOBILE_EXTENSION",
    "ORDER_DETAIL_EXTENSION",
    "FILE_CONTENT_EXTENSION",
    "POPULATE_FILE_EXTENSION",
    "CAR_STATUS_METADATA_EXTENSION",
    "LONG_WEATHER_EXTENSION",
    "PARKING_BRAKE_INSTRUCTION",
    "INTERMEDIARY_CITIES",
    "CREDIT_CARD_EXTENSION",
    "BOOKING_RECORD_EXTENSION",
    "FILES_TAIL_USED",
)


@dataclass(frozen=True)
class LongContext:
    """The tables, by the benchmark's constant names. Backends copy what they mutate."""

    tables: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.tables[name]


@cache
def load_long_context(root: Path) -> LongContext:
    """Parse the tables from an unpacked distribution root (cached per root)."""
    path = root / LONG_CONTEXT_FILE
    if not path.is_file():
        raise DatasetError(
            f"{path}: the long-context tables are read from the pinned release; this data "
            "directory has no sources (use the pinned release or an unpacked bfcl-eval root)"
        )
    constants = module_constants(path)
    missing = [name for name in _NAMES if name not in constants]
    if missing:
        raise DatasetError(f"{path}: constants not found: {', '.join(missing)}")
    return LongContext({name: constants[name] for name in _NAMES})
