"""Loading the pinned release: counts, renamed ids, format sensitivity, and bad input."""

import json
import shutil

import pytest

from pytest_bfcl.dataset import fetch
from pytest_bfcl.dataset.categories import ALL_SCORING, DATASET_SIZES
from pytest_bfcl.dataset.fetch import DatasetError, resolve_data_source
from pytest_bfcl.kinds import open_dataset


def test_counts_match_the_release(dataset):
    for category in ALL_SCORING:
        assert len(dataset.entries(category)) == DATASET_SIZES[category], category
    assert sum(len(dataset.entries(c)) for c in ALL_SCORING) == 5106


def test_answers_align_with_entries(dataset):
    for category in (
        "simple_python",
        "live_multiple",
        "multi_turn_base",
        "memory_vector",
        "web_search_base",
    ):
        answers = dataset.answers(category)
        assert set(answers) == {e.id for e in dataset.entries(category)}
    assert dataset.answers("irrelevance") == {}


def test_agentic_ids_are_renamed(dataset):
    assert dataset.entries("web_search_no_snippet")[0].id == "web_search_no_snippet_0"
    kv = dataset.entries("memory_kv")
    assert kv[0].id.startswith("memory_kv_") and kv[0].scenario == "student"
    assert kv[0].involved_classes == ["MemoryAPI_kv"]
    assert len(dataset.memory_prerequisites("memory_kv", "customer")) == 10
    assert (
        sum(
            len(dataset.memory_prerequisites("memory_kv", s))
            for s in ("student", "customer", "finance", "healthcare", "notetaker")
        )
        == 37
    )


def test_multi_turn_docs_and_held_out_functions(dataset):
    entry = dataset.entries("multi_turn_miss_func")[0]
    held = [d.name for docs in entry.held_out_functions.values() for d in docs]
    assert held and not set(held) & {d.name for d in entry.function}
    assert len(dataset.entries("multi_turn_base")[0].function) > 0


def test_format_sensitivity(dataset):
    entries = dataset.entries("format_sensitivity")
    assert len(entries) == 5200
    assert entries[0].id == (
        "format_sensitivity_0:ret_fmt=python&tool_call_tag=True&func_doc_fmt=python"
        "&prompt_fmt=plaintext&style=classic:simple_python_19"
    )
    assert len({e.format_config for e in entries}) == 26
    assert dataset.answers("format_sensitivity")[entries[0].id].id == "simple_python_19"


def _copy_data(data_source, tmp_path):
    target = tmp_path / "data"
    shutil.copytree(data_source.data_dir, target)
    return target


def test_malformed_line_names_file_and_line(data_source, tmp_path):
    root = _copy_data(data_source, tmp_path)
    path = root / "BFCL_v4_live_parallel.json"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:40]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"BFCL_v4_live_parallel\.json:3: invalid JSON"):
        open_dataset(resolve_data_source(root)).entries("live_parallel")


def test_invalid_entry_names_the_field(data_source, tmp_path):
    root = _copy_data(data_source, tmp_path)
    path = root / "BFCL_v4_live_parallel.json"
    lines = path.read_text().splitlines()
    bad = json.loads(lines[0])
    bad["question"] = "not a list"
    lines[0] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        DatasetError, match=r":1: entry 'live_parallel_0-0-0' is malformed at question"
    ):
        open_dataset(resolve_data_source(root)).entries("live_parallel")


def test_missing_data_directory():
    with pytest.raises(DatasetError, match="does not exist"):
        resolve_data_source("/nonexistent/bfcl")


def test_wheel_with_wrong_checksum_is_refused(tmp_path, monkeypatch):
    wheel = tmp_path / "bfcl_eval-2026.3.23-py3-none-any.whl"
    wheel.write_bytes(b"not the pinned wheel")
    with pytest.raises(DatasetError, match="sha256 mismatch"):
        fetch.ensure_pinned_data(cache_dir=tmp_path / "cache", wheel=wheel)
    assert not (tmp_path / "cache" / "bfcl-eval-2026.3.23").exists()


def test_cache_is_reused_without_download(data_source, monkeypatch):
    def no_download(*args, **kwargs):
        raise AssertionError("the cached release must be reused")

    monkeypatch.setattr(fetch, "_download_wheel", no_download)
    again = fetch.ensure_pinned_data(cache_dir=data_source.unpacked_root.parent)
    assert again.data_dir == data_source.data_dir
    assert again.sha256 == fetch.load_lock().sha256


def _fake_wheel(tmp_path, members):
    import hashlib
    import zipfile

    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    lock = fetch.load_lock().model_copy(
        update={"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
    )
    return wheel, lock


def test_unpacks_data_and_sources_only(tmp_path, monkeypatch):
    wheel, lock = _fake_wheel(
        tmp_path,
        {
            "bfcl_eval/data/BFCL_v4_x.json": '{"id": "x_0"}\n',
            "bfcl_eval/utils.py": "X = 1\n",
            "bfcl_eval-2026.3.23.dist-info/METADATA": "Name: bfcl-eval\n",
        },
    )
    monkeypatch.setattr(fetch, "load_lock", lambda: lock)
    source = fetch.ensure_pinned_data(cache_dir=tmp_path / "cache", wheel=wheel)
    assert (source.data_dir / "BFCL_v4_x.json").read_text() == '{"id": "x_0"}\n'
    assert (source.unpacked_root / "bfcl_eval" / "utils.py").is_file()
    assert not (source.unpacked_root / "bfcl_eval-2026.3.23.dist-info").exists()


def test_zip_slip_is_refused(tmp_path, monkeypatch):
    wheel, lock = _fake_wheel(tmp_path, {"bfcl_eval/data/../../../evil.py": "boom"})
    monkeypatch.setattr(fetch, "load_lock", lambda: lock)
    with pytest.raises(DatasetError, match="unsafe path"):
        fetch.ensure_pinned_data(cache_dir=tmp_path / "cache", wheel=wheel)
    assert not (tmp_path / "evil.py").exists()


def test_each_file_is_parsed_once_per_dataset(data_source, monkeypatch):
    from collections import Counter

    from pytest_bfcl.dataset import load

    reads: Counter = Counter()
    original = load.read_models

    def counting(path, model, one_pass=False):
        reads[str(path)] += 1
        return original(path, model, one_pass)

    monkeypatch.setattr(load, "read_models", counting)
    ds = open_dataset(data_source)
    for _ in range(2):
        for category in (*ALL_SCORING, "format_sensitivity"):
            ds.entries(category)
            ds.answers(category)
    assert reads and max(reads.values()) == 1


def test_a_string_broken_across_lines_is_refused_even_when_the_lines_join_into_objects(
    tmp_path,
):
    from pytest_bfcl.dataset.fetch import DatasetError
    from pytest_bfcl.dataset.load import read_jsonl

    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text('{"id":"a"},{"id":"b", "x":"}\n{"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"damaged.jsonl:1: invalid JSON"):
        list(read_jsonl(damaged))
