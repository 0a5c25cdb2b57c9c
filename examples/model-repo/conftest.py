"""Model-repo conftest: identifies the checkpoint under test in the pytest header and in junit,
so a dashboard can tell which model produced which scores."""

from __future__ import annotations

import os

import pytest


def pytest_report_header(config: pytest.Config) -> str:
    return f"model checkpoint: {os.environ.get('MODEL_REVISION', 'local working tree')}"


@pytest.fixture(scope="session", autouse=True)
def _checkpoint_in_junit(record_testsuite_property):
    record_testsuite_property("model_revision", os.environ.get("MODEL_REVISION", "local"))
