"""BFCL beside a repository's own tests: with the plugin configured in the ini file, the entries
run only when the invocation asks (their node path ``bfcl/`` among the paths collected, or a
``--bfcl-*`` option), ``bfcl/...`` arguments select entries, ``--lf`` reruns failed entries,
and relative paths in ``bfcl_*`` ini keys are read from the ini file's directory."""

from __future__ import annotations

import json

import pytest

UNIT_TEST = "def test_unit():\n    assert 1 + 1 == 2\n"


@pytest.fixture
def repo(pytester, data_source):
    """A repository configuring the plugin as a model repository does, with a test of its own."""
    pytester.makepyprojecttoml(
        "[tool.pytest.ini_options]\n"
        'testpaths = ["tests"]\n'
        'bfcl_model = "oracle"\n'
        'bfcl_category = "live_parallel"\n'
        f'bfcl_data = "{data_source.data_dir}"\n'
        'bfcl_report = "reports/bfcl-report.json"\n'
    )
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_unit.py").write_text(UNIT_TEST)
    return pytester


def test_the_repositorys_own_tests_run_alone(repo):
    for args in (["tests/test_unit.py"], [], ["-m", "not bfcl", "tests/test_unit.py"]):
        result = repo.runpytest("-p", "no:cacheprovider", *args)
        assert result.ret == 0, (args, result.stdout.str()[-2000:])
        result.assert_outcomes(passed=1)
        assert "BFCL V4 scores" not in result.stdout.str()
    assert not (repo.path / "reports").exists()  # nothing of BFCL was written
    header = repo.runpytest("-p", "no:cacheprovider").stdout.str()
    assert "pytest-bfcl: BFCL entries not run" in header and "`pytest bfcl`" in header


def test_the_node_path_or_an_option_asks_for_the_entries(repo):
    result = repo.runpytest("-p", "no:cacheprovider", "bfcl")
    result.assert_outcomes(passed=16)  # live_parallel alone: the repository's test not collected
    result = repo.runpytest("-p", "no:cacheprovider", "--bfcl-sample=4", "--bfcl-seed=0")
    result.assert_outcomes(passed=4 + 1)  # an option asks; testpaths still give the unit test
    assert (repo.path / "reports" / "bfcl-report.json").is_file()


def test_node_id_arguments_select_entries(repo, data_source):
    first = "live_parallel_0-0-0"
    result = repo.runpytest("-p", "no:cacheprovider", f"bfcl/live_parallel::{first}")
    result.assert_outcomes(passed=1)
    assert "15 deselected" in result.stdout.str()
    result = repo.runpytest("-p", "no:cacheprovider", "bfcl/live_parallel", "tests/test_unit.py")
    result.assert_outcomes(passed=16 + 1)


def test_last_failed_reruns_only_the_failed_entries(repo):
    noisy = "--bfcl-model=oracle:fail=0.3,seed=1"
    first = repo.runpytest("bfcl", noisy)
    failed = first.parseoutcomes()["failed"]
    assert failed > 0
    again = repo.runpytest("bfcl", noisy, "--lf")
    again.assert_outcomes(failed=failed)
    assert "run-last-failure: rerun previous" in again.stdout.str()


def test_ini_paths_are_read_from_the_ini_files_directory(repo, cache_dir_in_header, monkeypatch):
    sub = repo.path / "tests"
    monkeypatch.chdir(sub)
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", "--bfcl-sample=2")
    assert result.ret == 0, result.stdout.str()[-2000:]
    report = repo.path / "reports" / "bfcl-report.json"
    assert json.loads(report.read_text())["categories"]["live_parallel"]["total"] == 2
    assert not (sub / "reports").exists()
    assert "../reports/bfcl-report.json" in result.stdout.str()  # printed from where it ran
    # the response cache too sits beside the ini file, as pytest's own cache in the rootdir
    assert "response cache: ../.bfcl-cache" in result.stdout.str()


def test_an_ini_file_that_is_none_never_places_the_response_cache_in_a_system_directory(
    repo, cache_dir_in_header, data_source
):
    result = repo.runpytest_subprocess(
        "-c", "/dev/null", "-p", "no:cacheprovider", "--bfcl-model=oracle",
        "--bfcl-category=live_parallel", f"--bfcl-data={data_source.data_dir}",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    (line,) = [x for x in result.stdout.lines if x.startswith("response cache: ")]
    placed = (repo.path / line.removeprefix("response cache: ")).resolve()
    assert placed == repo.path / ".bfcl-cache"  # the rootdir pytest chose, not /dev


@pytest.fixture
def cache_dir_in_header(repo):
    repo.makeconftest(
        "def pytest_report_header(config):\n"
        "    plugin = config.pluginmanager.get_plugin('bfcl-session')\n"
        "    return f'response cache: {plugin.settings.cache_dir}' if plugin else None\n"
    )
    return repo


def test_ini_keys_without_asking_leave_the_plugin_quiet_and_no_bfcl_leaves_it_out(repo):
    repo.makeconftest(
        "import pytest\n\n"
        "@pytest.hookimpl(optionalhook=True)\n"
        "def pytest_bfcl_add_categories():\n"
        "    return []\n"
    )
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:bfcl")
    assert result.ret == 0, result.stdout.str()[-2000:]
    result.assert_outcomes(passed=1)


def test_files_named_in_the_vllm_args_ini_value_are_read_from_the_ini_files_directory(tmp_path):
    """``bfcl_vllm_args = "--chat-template tools.jinja"`` names the file beside the ini file,
    from wherever pytest runs (a clone run from its parent uses the clone's template)."""
    import shlex
    from types import SimpleNamespace

    from pytest_bfcl.invocation import ini_value_in_place

    clone = tmp_path / "clone"
    (clone / "adapters").mkdir(parents=True)
    (clone / "tools.jinja").write_text("{{ messages }}")
    (tmp_path / "tools.jinja").write_text("the parent's, not the clone's")
    config = SimpleNamespace(
        inipath=clone / "pyproject.toml", invocation_params=SimpleNamespace(dir=tmp_path)
    )
    value = (
        "--chat-template tools.jinja --tool-call-parser=hermes --max-model-len 8192 "
        "--lora-modules a=adapters --generation-config=adapters --api-key 'a b' "
        "--served-model-name HuggingFaceTB/SmolLM2"
    )
    placed = shlex.split(str(ini_value_in_place(config, "vllm_args", value)))
    assert placed == [
        "--chat-template", "clone/tools.jinja", "--tool-call-parser=hermes",
        "--max-model-len", "8192", "--lora-modules", "a=clone/adapters",
        "--generation-config=clone/adapters", "--api-key", "a b",
        "--served-model-name", "HuggingFaceTB/SmolLM2",
    ]  # fmt: skip
    # from the ini file's own directory, and for an absolute path, the value is kept as written
    here = SimpleNamespace(
        inipath=clone / "pyproject.toml", invocation_params=SimpleNamespace(dir=clone)
    )
    assert ini_value_in_place(here, "vllm_args", value) == value
    absolute = f"--chat-template {clone / 'tools.jinja'}"
    assert ini_value_in_place(config, "vllm_args", absolute) == absolute
    assert ini_value_in_place(config, "vllm_args", "--chat-template 'unclosed") == (
        "--chat-template 'unclosed"
    )
