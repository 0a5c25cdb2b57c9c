"""The model repository's conftest: its own tool-calling cases as a category beside the
benchmark's, and the checkpoint under test ($BFCL_MODEL_REVISION, which the plugin also names
in its header and keys its response cache by) on every entry's junit testcase, so a dashboard
can tell which model produced which scores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_bfcl.dataset.custom import CustomCategory

HERE = Path(__file__).parent
REVISION = os.environ.get("BFCL_MODEL_REVISION", "local working tree")


# optionalhook: pytest-bfcl declares this hook; with the plugin left out (-p no:bfcl) pytest
# would otherwise refuse a hook it does not know.
@pytest.hookimpl(optionalhook=True)
def pytest_bfcl_add_categories() -> list[CustomCategory]:
    """The team's own tools and questions (BFCL format, in bfcl/), checked by the benchmark's
    checkers and gated with the rest; reported beside the V4 scores, outside its overall."""
    return [
        CustomCategory(
            name="acme_tools",
            questions=HERE / "bfcl" / "acme_tools.json",
            answers=HERE / "bfcl" / "acme_tools_answers.json",
            checker="simple",
        )
    ]


def pytest_runtest_setup(item: pytest.Item) -> None:
    # On every BFCL entry's testcase (their node ids start with bfcl/): set on the item rather
    # than with the record_property fixture, which warns under pytest's default junit family
    # (xunit2) once per entry; record_testsuite_property would not reach the junit file from
    # pytest-xdist's workers (the nightly job runs -n auto).
    if item.nodeid.startswith("bfcl/"):
        item.user_properties.append(("model_revision", REVISION))
