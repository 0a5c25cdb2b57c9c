"""xdist workers collect the ids the controller's selection gave them, and read a category's
data only when they score one of its entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("xdist")

# Each worker notes which categories' entries it read, and whether it read any to collect.
RECORDING_CONFTEST = """
import json
from pathlib import Path

import pytest


def pytest_configure(config):
    workerinput = getattr(config, "workerinput", None)  # this run's own workers only
    if workerinput is None:
        return
    worker = workerinput["workerid"]
    from pytest_bfcl.dataset.load import Dataset

    original = Dataset.entries
    log = Path(str(config.rootpath)) / f"read-{worker}.jsonl"

    def entries(self, category):
        phase = "collect" if not getattr(config, "_bfcl_collected", False) else "run"
        with log.open("a") as out:
            out.write(json.dumps([phase, category]) + "\\n")
        return original(self, category)

    Dataset.entries = entries


def pytest_collection_finish(session):
    session.config._bfcl_collected = True
"""


def _reads(path: Path) -> list[tuple[str, str]]:
    reads: list[tuple[str, str]] = []
    for log in sorted(path.glob("read-gw*.jsonl")):
        reads += [tuple(json.loads(line)) for line in log.read_text().splitlines()]
    return reads


@pytest.mark.e2e
def test_workers_read_only_the_categories_they_score(pytester):
    pytester.makeconftest(RECORDING_CONFTEST)
    args = ["--bfcl-model=oracle", "--bfcl-category=multiple,parallel", "-p", "no:cacheprovider"]
    result = pytester.runpytest_subprocess("-n", "2", *args)
    out = result.stdout.str()
    assert result.ret == 0, out[-3000:]
    result.assert_outcomes(passed=400)
    reads = _reads(pytester.path)
    assert not [r for r in reads if r[0] == "collect"], reads  # collected from the given ids
    by_worker = {
        log.name: {c for _, c in map(json.loads, log.read_text().splitlines())}
        for log in pytester.path.glob("read-gw*.jsonl")
    }
    # the oracle asks no server: one run of entries per worker, one category each here
    assert sorted(map(sorted, by_worker.values())) == [["multiple"], ["parallel"]], by_worker


def test_ids_given_are_collected_without_reading_the_data():
    from pytest_bfcl.run.engine import BfclRun
    from pytest_bfcl.settings import Settings

    run = BfclRun.create(Settings(model="oracle", categories="multiple,parallel"))
    run.selection.index.folder = None  # no index kept from an earlier run (dataset/index.py)
    run.selection.given_ids = {"multiple": ["multiple_3", "multiple_1"]}
    assert run.selection.collected_ids("multiple") == ["multiple_3", "multiple_1"]
    assert run.dataset._entries == {}  # nothing read
    # a category the controller gave nothing for is read here, as without xdist
    assert run.selection.collected_ids("parallel")[:2] == ["parallel_0", "parallel_1"]
    assert set(run.dataset._entries) == {"parallel"}
    assert run.selection.collection()["multiple"] == ["multiple_3", "multiple_1"]
