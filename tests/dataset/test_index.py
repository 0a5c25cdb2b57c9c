"""A category's index (ids, clusters, weights) is kept beside the release and stands for its
data until a file it came from changes (pytest_bfcl/dataset/index.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_bfcl.dataset.fetch import DatasetError, DataSource
from pytest_bfcl.dataset.index import FOLDER
from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.run.selection import Selection
from pytest_bfcl.settings import Settings

CATEGORIES = "simple_python,multi_turn_base"


@pytest.fixture
def release(tmp_path: Path, data_source: DataSource) -> DataSource:
    """A copy of the pinned release's data: the index is written beside it."""
    assert data_source.unpacked_root is not None
    root = tmp_path / "release"
    data = root / data_source.data_dir.relative_to(data_source.unpacked_root)
    shutil.copytree(data_source.data_dir, data)
    return DataSource(data, data_source.version, data_source.sha256, root)


def selection(source: DataSource) -> Selection:
    return Selection(Settings(model="oracle", categories=CATEGORIES), open_dataset(source))


def test_a_checked_category_is_indexed_and_the_index_stands_for_its_data(release):
    first = selection(release)
    for category in ("simple_python", "multi_turn_base"):
        first.check(category)
    assert sorted(p.name for p in (release.unpacked_root / FOLDER).glob("*/*.json")) == [
        "multi_turn_base.json",
        "simple_python.json",
    ]
    later = selection(release)
    for category in ("simple_python", "multi_turn_base"):
        later.check(category)  # a valid index: nothing read
    assert not later.dataset.loaded("simple_python")
    assert not later.dataset.loaded("multi_turn_base")
    ids = later.collected_ids("multi_turn_base")
    clusters = later.clusters()
    weights = [(later.expected_requests(i), later.scoring_cost(i)) for i in ids]
    assert not later.dataset.loaded("multi_turn_base")
    # the same as read from the data
    fresh = Selection(Settings(model="oracle", categories=CATEGORIES), open_dataset(release))
    fresh.index.folder = None  # no index at all
    assert ids == [e.id for e in fresh.entries_for("multi_turn_base")]
    assert clusters == fresh.clusters() and len(set(clusters.values())) > 1
    assert weights == [(fresh.expected_requests(i), fresh.scoring_cost(i)) for i in ids]
    assert len(set(weights)) > 1


def test_a_changed_data_file_or_a_broken_index_is_read_again(release):
    selection(release).check("simple_python")
    question = release.data_dir / "BFCL_v4_simple_python.json"
    later = os.stat(question).st_mtime_ns + 10**9
    os.utime(question, ns=(later, later))
    again = selection(release)
    assert again.index.get("simple_python") is None
    again.check("simple_python")
    assert again.dataset.loaded("simple_python")
    assert selection(release).index.get("simple_python") is not None  # indexed anew
    (kept,) = (release.unpacked_root / FOLDER).glob("*/simple_python.json")
    good = kept.read_text()
    for damaged in (
        '{"files": {"x": [1, 2]}, "ids": ["a"]}',  # not an index
        good.replace('"simple_python_1"', '"simple_python_0"', 1),  # an id twice
        good.replace('"simple_python_1"', '"multiple_1"', 1),  # another category's id
        "\x00" * 10,
    ):
        kept.write_text(damaged)
        broken = selection(release)
        assert broken.index.get("simple_python") is None
        broken.check("simple_python")
        assert broken.dataset.loaded("simple_python")
        assert broken.collected_ids("simple_python")[:2] == ["simple_python_0", "simple_python_1"]


def test_damaged_data_behind_a_stale_index_is_still_refused(release):
    selection(release).check("simple_python")
    question = release.data_dir / "BFCL_v4_simple_python.json"
    question.write_text(question.read_text(encoding="utf-8")[:-200] + "\n", encoding="utf-8")
    with pytest.raises(DatasetError):
        selection(release).check("simple_python")


def test_the_user_s_own_data_is_read_every_time(release):
    own = DataSource(release.data_dir, "custom", None, None)
    user = selection(own)
    user.check("simple_python")
    assert user.dataset.loaded("simple_python") and user.index.folder is None


def test_where_no_index_can_be_written_the_data_is_read_every_time(release):
    (release.unpacked_root / FOLDER).write_text("not a folder")  # mkdir there fails
    for _ in range(2):
        run = selection(release)
        run.check("simple_python")
        assert run.dataset.loaded("simple_python")
        assert run.collected_ids("simple_python")[0] == "simple_python_0"


def test_a_sample_drawn_from_the_index_is_the_one_drawn_from_the_data(release):
    settings = Settings(model="oracle", categories=CATEGORIES, sample=0.1, seed=7)
    selection(release).check("simple_python")
    selection(release).check("multi_turn_base")
    indexed = Selection(settings, open_dataset(release))
    read = Selection(settings, open_dataset(release))
    read.index.folder = None
    for category in ("simple_python", "multi_turn_base"):
        drawn = indexed.collected_ids(category)
        assert drawn == [e.id for e in read.entries_for(category)]
        assert 0 < len(drawn) < len(read.all_ids(category))
    assert not indexed.dataset.loaded("simple_python")
    assert indexed.sampled_populations() == read.sampled_populations()
