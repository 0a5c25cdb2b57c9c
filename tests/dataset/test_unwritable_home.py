"""A home (or cache folder) where the dataset cannot be stored is one line naming the folder
and the fix, before any download, not an INTERNALERROR."""

from __future__ import annotations

import pytest

from pytest_bfcl.dataset import fetch


@pytest.fixture
def unwritable_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.write_text("a file where the home folder should be: nothing can be made under it")
    monkeypatch.setenv("HOME", str(home))
    for name in (
        fetch.ENV_DATA_DIR,
        fetch.ENV_DOWNLOAD_DIR,
        fetch.ENV_CACHE_DIR,
        fetch.ENV_WHEEL,
        "XDG_CACHE_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    return home


def test_no_place_for_the_dataset_is_a_dataset_error_before_any_download(
    unwritable_home, monkeypatch
):
    def no_download(*args):
        raise AssertionError("downloaded although the data could not be kept")

    monkeypatch.setattr(fetch, "_download_wheel", no_download)
    with pytest.raises(fetch.DatasetError) as raised:
        fetch.ensure_pinned_data()
    message = str(raised.value)
    assert f"cannot store the BFCL data in {unwritable_home}/.cache/pytest-bfcl" in message
    assert fetch.ENV_DOWNLOAD_DIR in message and "--bfcl-data" in message and "\n" not in message


def test_a_session_without_a_place_for_the_dataset_ends_in_one_line(pytester, unwritable_home):
    result = pytester.runpytest_subprocess(
        "--bfcl-model=oracle", "--bfcl-category=simple_python", "-p", "no:cacheprovider",
        timeout=120,
    )  # fmt: skip
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out, out[-3000:]
    lines = [line for line in out.splitlines() if "cannot store the BFCL data" in line]
    assert len(lines) == 1 and result.ret != 0
