"""An xdist worker's embedding model and vector index take a share of the CPUs
(pytest_bfcl/backends/embedding.py, share_cpus)."""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import pytest

from pytest_bfcl.backends import embedding


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(embedding, "_cpu_share", None)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    set_to: dict[str, int] = {}
    monkeypatch.setitem(
        sys.modules, "torch", SimpleNamespace(set_num_threads=lambda n: set_to.update(torch=n))
    )
    monkeypatch.setitem(
        sys.modules, "faiss", SimpleNamespace(omp_set_num_threads=lambda n: set_to.update(faiss=n))
    )
    return set_to


def test_each_of_the_workers_gets_its_share_of_the_cpus(fresh):
    embedding.share_cpus(3)
    assert os.environ["OMP_NUM_THREADS"] == "2"  # 8 CPUs, 3 workers: 2 threads each
    assert fresh == {"torch": 2, "faiss": 2}  # libraries already loaded follow too
    fresh.clear()
    embedding._apply_cpu_share()  # as the embedder does once it has loaded its model
    assert fresh == {"torch": 2, "faiss": 2}


def test_more_workers_than_cpus_still_get_one_thread(fresh):
    embedding.share_cpus(20)
    assert os.environ["OMP_NUM_THREADS"] == "1" and fresh == {"torch": 1, "faiss": 1}


def test_a_thread_count_the_user_set_is_left_alone(fresh, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "6")
    embedding.share_cpus(4)
    assert os.environ["OMP_NUM_THREADS"] == "6"
    assert fresh == {} and embedding._cpu_share is None
