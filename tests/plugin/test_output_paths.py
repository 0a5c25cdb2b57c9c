"""Every option and tool that writes a file refuses a path that is a device, a FIFO, a folder,
a symbolic link, or one of its own inputs, in one line, before anything is written; what is
there stays as it was. (A write replaces its target by a rename: ``--bfcl-html=/dev/null`` in a
container run as root would otherwise remove /dev/null.)"""

from __future__ import annotations

import json

import pytest
from not_files import not_a_file, unchanged

from pytest_bfcl.merge_baselines import main as merge_main

WRITERS = ["--bfcl-html", "--bfcl-report", "--bfcl-save-baseline", "--bfcl-chart"]


@pytest.fixture
def data_args(data_source) -> list[str]:
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider"]


@pytest.mark.parametrize("kind", ["device", "folder", "link"])
@pytest.mark.parametrize("option", WRITERS)
def test_an_option_that_writes_refuses_what_is_no_file(pytester, data_args, option, kind):
    target = not_a_file(pytester.path, kind)
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=simple_python", f"{option}={target}", *data_args
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.str().splitlines() if str(target) in line]
    assert len(lines) == 1 and option in lines[0], result.stderr.str()
    words = {"device": "is a ", "folder": "(not a directory)", "link": "is a symbolic link"}[kind]
    assert words in lines[0] and "Traceback" not in result.stderr.str()
    assert unchanged(target, kind)


@pytest.mark.parametrize("option", WRITERS)
def test_an_output_over_the_baseline_compared_with_is_refused(
    pytester, data_args, option, tmp_path
):
    baseline = tmp_path / "baseline.json"
    baseline.write_text("{}")
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=simple_python", f"--bfcl-baseline={baseline}",
        f"{option}={baseline}", *data_args,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "is the baseline this run compares with" in result.stderr.str()
    assert baseline.read_text() == "{}"


def test_two_outputs_at_one_path_are_refused(pytester, data_args, tmp_path):
    out = tmp_path / "out.json"
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=simple_python", f"--bfcl-report={out}",
        f"--bfcl-html={out}", *data_args,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--bfcl-report and --bfcl-html both name" in result.stderr.str()


# -- the tools -------------------------------------------------------------------------------


@pytest.fixture
def baselines(tmp_path):
    from pytest_bfcl.gate import baseline_data

    paths = []
    for name in ("a", "b"):
        data = baseline_data(
            {"simple_python_0": True},
            {"model": "m", "run_id": name, "dataset": {"version": "x"}},
            {},
            {"simple_python": 1},
        )
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        paths.append(path)
    return paths


@pytest.mark.parametrize("kind", ["device", "folder", "link", "input"])
def test_merge_baselines_refuses_an_output_that_is_no_new_file(tmp_path, baselines, kind, capsys):
    target = baselines[0] if kind == "input" else not_a_file(tmp_path, kind)
    kept = target.read_bytes() if kind == "input" else None
    assert merge_main([str(target), *map(str, baselines)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"merge_baselines: cannot write {target}: it ")
    if kind == "input":
        assert "one of the files read" in err and target.read_bytes() == kept
    else:
        assert unchanged(target, kind)
