"""Option help texts state the defaults the settings really have (help is built without
importing the settings, so a test keeps the two in step)."""

from __future__ import annotations

import re

import pytest

from pytest_bfcl.options import OPTIONS
from pytest_bfcl.settings import GateSettings, Settings

_UNITS = {"MiB": 2**20}


def _stated_default(help_text: str) -> str | None:
    match = re.search(
        r"\(default:? ([0-9.]+(?: MiB)?|[\w.-]*\w)\)|default (\d[0-9.]*)\b", help_text
    )
    if match is None:
        return None
    return match.group(1) or match.group(2)


def _value(text: str) -> float | str:
    number, _, unit = text.partition(" ")
    try:
        return float(number) * _UNITS.get(unit, 1)
    except ValueError:
        return text


def _actual_default(name: str) -> object:
    if name.startswith("gate_"):
        return GateSettings.model_fields[name.removeprefix("gate_")].default
    return Settings.model_fields[name].default


@pytest.mark.parametrize(
    "option", [o for o in OPTIONS if _stated_default(o.help)], ids=lambda o: o.flag
)
def test_help_states_the_real_default(option):
    stated = _value(_stated_default(option.help) or "")
    actual = _actual_default(option.name)
    if isinstance(stated, float):
        assert float(actual) == stated  # type: ignore[arg-type]
    else:
        assert str(actual) == stated


def test_defaults_are_stated_for_the_numbers_users_tune():
    stated = {o.flag for o in OPTIONS if _stated_default(o.help)}
    for flag in ("--bfcl-concurrency", "--bfcl-timeout", "--bfcl-retries", "--bfcl-alpha",
                 "--bfcl-max-response-bytes", "--bfcl-list-failures"):  # fmt: skip
        assert flag in stated
