"""Reports and baselines are never destroyed by accident: a junit path that cannot be written
is one line and every other report is still written; a run that scored nothing (--collect-only,
a -k that matched nothing) leaves an existing baseline as it was."""

from __future__ import annotations

import json

import pytest


def run(pytester, data_source, *args):
    return pytester.runpytest_subprocess(
        f"--bfcl-data={data_source.data_dir}", "--bfcl-model=oracle",
        "--bfcl-category=simple_python", "-p", "no:cacheprovider", *args, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("shape", ["dangling link", "under a file"])
def test_an_unwritable_junit_path_is_one_line_and_the_rest_is_written(
    pytester, data_source, tmp_path, shape
):
    junit = tmp_path / "junit.xml"
    if shape == "dangling link":
        junit.symlink_to(tmp_path / "no-such-folder" / "junit.xml")
    else:
        (tmp_path / "plain").write_text("a file")
        junit = tmp_path / "plain" / "junit.xml"
    outputs = {name: tmp_path / name for name in ("report.json", "page.html", "base.json")}
    result = run(
        pytester, data_source, f"--junitxml={junit}", "-k", "simple_python_1",
        f"--bfcl-report={outputs['report.json']}", f"--bfcl-html={outputs['page.html']}",
        f"--bfcl-save-baseline={outputs['base.json']}",
    )  # fmt: skip
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, out[-3000:]
    assert "Traceback" not in out and "INTERNALERROR" not in out
    assert "BFCL V4 scores" in out and "BFCL files not written" in out
    not_written = [line for line in out.splitlines() if line.startswith("junit ")]
    assert len(not_written) == 1 and str(junit) in not_written[0], out[-3000:]
    for name, path in outputs.items():
        assert path.is_file(), name
    if shape == "dangling link":
        assert junit.is_symlink() and not junit.exists()  # left as it was


def test_collect_only_leaves_a_baseline_as_it_was(pytester, data_source, tmp_path):
    baseline = tmp_path / "base.json"
    recorded = run(
        pytester, data_source, "-k", "simple_python_1", f"--bfcl-save-baseline={baseline}"
    )
    assert recorded.ret == 0 and json.loads(baseline.read_text())["verdicts"]
    before = baseline.read_bytes()
    result = run(pytester, data_source, "--collect-only", f"--bfcl-save-baseline={baseline}")
    assert result.ret == 0 and baseline.read_bytes() == before


def test_a_run_that_scored_nothing_leaves_a_baseline_as_it_was(pytester, data_source, tmp_path):
    baseline = tmp_path / "base.json"
    baseline.write_text('{"format": "kept as it was"}')
    result = run(
        pytester, data_source, "-k", "no_entry_is_called_this",
        f"--bfcl-save-baseline={baseline}", f"--bfcl-report={tmp_path / 'report.json'}",
    )  # fmt: skip
    out = result.stdout.str()
    assert baseline.read_text() == '{"format": "kept as it was"}'
    assert "Traceback" not in out


def test_a_junit_file_that_fails_only_at_the_end_is_one_line_and_the_rest_is_written(
    pytester, data_source, tmp_path
):
    folder = tmp_path / "junit-folder"
    junit = folder / "junit.xml"
    pytester.makeconftest(
        "import shutil\n"
        "def pytest_collection_finish(session):\n"
        f"    shutil.rmtree({str(folder)!r}, ignore_errors=True)\n"
        f"    open({str(folder)!r}, 'w').write('a file where the folder was')\n"
    )
    report = tmp_path / "report.json"
    folder.mkdir()
    result = run(
        pytester, data_source, f"--junitxml={junit}", "-k", "simple_python_1",
        f"--bfcl-report={report}",
    )  # fmt: skip
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, out[-3000:]
    assert "Traceback" not in out and "INTERNALERROR" not in out
    assert "BFCL V4 scores" in out and report.is_file()
    not_written = [line for line in out.splitlines() if line.startswith("junit ")]
    assert len(not_written) == 1 and str(junit) in not_written[0], out[-3000:]
