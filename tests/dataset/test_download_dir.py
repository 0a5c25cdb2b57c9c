"""Where the pinned release is unpacked: ``$BFCL_DOWNLOAD_DIR``; its old name
``$BFCL_CACHE_DIR`` (easily taken for the response cache, ``--bfcl-cache-dir``) still works, with
one warning naming the new one."""

from __future__ import annotations

import warnings

import pytest

from pytest_bfcl.dataset import fetch


@pytest.fixture(autouse=True)
def no_place_set(monkeypatch, tmp_path):
    for name in (fetch.ENV_DOWNLOAD_DIR, fetch.ENV_CACHE_DIR, "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_the_download_dir_names_the_place_without_a_warning(monkeypatch, tmp_path):
    monkeypatch.setenv(fetch.ENV_DOWNLOAD_DIR, str(tmp_path / "bfcl"))
    monkeypatch.setenv(fetch.ENV_CACHE_DIR, str(tmp_path / "old"))  # the new name wins
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fetch.default_cache_dir() == tmp_path / "bfcl"


def test_the_old_name_is_still_honoured_with_one_line_naming_the_new(monkeypatch, tmp_path):
    monkeypatch.setenv(fetch.ENV_CACHE_DIR, str(tmp_path / "old"))
    with pytest.warns(FutureWarning) as caught:
        assert fetch.default_cache_dir() == tmp_path / "old"
    (message,) = [str(w.message) for w in caught]
    assert "BFCL_CACHE_DIR is deprecated" in message and "BFCL_DOWNLOAD_DIR" in message
    assert "\n" not in message


def test_without_either_the_release_goes_to_the_users_cache(tmp_path):
    assert fetch.default_cache_dir() == tmp_path / "home" / ".cache" / "pytest-bfcl"
