"""The model repository's conftest: its own tool-calling cases as a category beside the
benchmark's, and the checkpoint under test named in the pytest header and the junit file, so a
dashboard can tell which model produced which scores."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.dataset.custom import CustomCategory

HERE = Path(__file__).parent
REVISION = os.environ.get("MODEL_REVISION", "local working tree")


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


def pytest_report_header(config: pytest.Config) -> str:
    return f"model checkpoint: {REVISION}"


@pytest.fixture(autouse=True)
def _checkpoint_in_junit(record_property: Any) -> None:
    # On every entry's testcase rather than once on the suite: record_testsuite_property does
    # not reach the junit file from pytest-xdist's workers (the nightly job runs -n auto).
    record_property("model_revision", REVISION)
