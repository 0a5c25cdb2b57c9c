"""Every command-line option and ini value of the plugin, declared once: its flag (and so its
ini key), the settings field it fills, its help, its kind and the rule its value must meet;
pytest's options and ini values, and the settings' validation, are made from these. Plain
Python on purpose: pytest imports this in every run of a repository that installs the plugin,
and the validated settings (pydantic) are only built when a model is given
(:mod:`pytest_bfcl.settings`, whose fields give the types and defaults)."""

from __future__ import annotations

from pytest_bfcl.option_rules import Rule
from pytest_bfcl.options.base import Option
from pytest_bfcl.options.results import RESULTS_OPTIONS
from pytest_bfcl.options.scoring import SCORING_OPTIONS
from pytest_bfcl.options.serving import SERVING_OPTIONS

__all__ = ["OPTIONS", "RULES", "Option"]

# In this order in pytest's help.
OPTIONS: tuple[Option, ...] = (*SCORING_OPTIONS, *RESULTS_OPTIONS, *SERVING_OPTIONS)


# -- what each option accepts --------------------------------------------------------------------

# Each settings field's rule, from the options that fill them.
RULES: dict[str, Rule] = {opt.name: opt.rule for opt in OPTIONS}
