"""One option of the plugin: its flag (and ini key), the settings field it fills, its help, its
kind and the rule its value must meet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_bfcl import option_rules as rules
from pytest_bfcl.option_rules import Rule


@dataclass(frozen=True)
class Option:
    flag: str
    name: str  # the settings field it fills
    help: str
    kind: Literal["value", "append", "flag"] = "value"
    rule: Rule = rules.TEXT  # what it accepts, and how its value becomes the setting's

    @property
    def ini(self) -> str:
        """The ini name: the flag without dashes (``--bfcl-min-score`` -> ``bfcl_min_score``)."""
        return self.flag.removeprefix("--").replace("-", "_")
