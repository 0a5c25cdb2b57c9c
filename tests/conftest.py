"""Shared fixtures: the pinned dataset (fetched once into the user cache) and the reference
corpora beside the checkout, when present."""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

import pytest

from pytest_bfcl.dataset.fetch import DataSource, ensure_pinned_data
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.texts import ProtocolTexts, load_texts
from pytest_bfcl.kinds import open_dataset

# Extension modules (numpy, torch, faiss) cannot be loaded twice in one process, and pytester's
# in-process runs drop the modules a run imported. Loading them here, before any such run,
# keeps them for the whole session (the vector memory imports them inside inner runs).
for _name in ("numpy", "torch", "faiss", "sentence_transformers"):
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name)

# The plugin imports its session and model modules only when a model is given; pytester's
# in-process runs would then import them afresh in each run (new exception classes that the
# modules kept from an earlier run do not catch). Importing them once here keeps one copy.
for _name in ("pytest_bfcl.session", "pytest_bfcl.builtin_models", "pytest_bfcl.models.replay",
              "pytest_bfcl.models.oracle", "pytest_bfcl.models.openai_chat",
              "pytest_bfcl.servers.vllm_server", "pytest_bfcl.web.access",
              "pytest_bfcl.check.executable", "pytest_bfcl.check.rest",
              "pytest_bfcl.models.oracle_executable",
              "pytest_bfcl.kinds.exec_probe"):  # fmt: skip
    importlib.import_module(_name)

# Helper modules that test modules both import and load as plugins (fixtures).
pytest.register_assert_rewrite("gate_scenario")

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    return Path(os.environ.get("BFCL_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def data_source() -> DataSource:
    return ensure_pinned_data()


@pytest.fixture(scope="session")
def dataset(data_source: DataSource) -> Dataset:
    return open_dataset(data_source)


@pytest.fixture(scope="session")
def texts(data_source: DataSource) -> ProtocolTexts:
    """The benchmark's model-facing texts, read from the pinned release."""
    return load_texts(data_source.unpacked_root)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    path = shared_dir() / "reference"
    if not path.is_dir():
        pytest.skip(f"the reference corpora are not present at {path}")
    return path


@pytest.fixture
def gate_env(pytester, dataset, data_source, tmp_path):
    """Records a baseline in which entries 0..19 fail; returns a runner for later results
    (tests/gate_scenario.py)."""
    from gate_scenario import ids, write_results

    base_results = write_results(tmp_path / "base", dataset, ids(range(20)))
    baseline = tmp_path / "baseline.json"
    common = [
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-category=simple_python",
        "-p",
        "no:cacheprovider",
    ]
    first = pytester.runpytest(
        f"--bfcl-model=replay:{base_results}", f"--bfcl-save-baseline={baseline}", *common
    )
    # nothing to compare with: the failures are what the baseline records
    first.assert_outcomes(passed=380, xfailed=20)
    assert first.ret == 0

    def run(wrong: set[str], *extra: str, name: str = "now"):
        results = write_results(tmp_path / name, dataset, wrong)
        return pytester.runpytest(
            f"--bfcl-model=replay:{results}", f"--bfcl-baseline={baseline}", *common, *extra
        )

    return run, baseline
