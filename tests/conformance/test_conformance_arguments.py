"""The conformance tools never destroy what they did not make, and refuse bad arguments in one
line before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_bfcl.conformance import reference
from pytest_bfcl.conformance.cli import main as compare_results
from pytest_bfcl.conformance.requests_cli import main as compare_requests

MODEL = ["--leaderboard-model", "gpt-4.1-2025-04-14-FC"]


def test_an_existing_folder_that_is_no_virtualenv_of_the_tools_is_refused_not_deleted(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(reference.SetupError, match="not a virtualenv this tool made") as caught:
        reference.ensure_venv(folder)
    assert "\n" not in str(caught.value)
    assert (folder / "precious.txt").read_text(encoding="utf-8") == "keep me"


def test_a_virtualenv_the_tool_made_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".pytest-bfcl-made").write_text("2026.3.23", encoding="utf-8")
    (venv / "half-built").write_text("", encoding="utf-8")
    made: list[list[str]] = []

    def fake_run(cmd, **kw):
        made.append(list(cmd))
        if cmd[1:3] == ["-m", "venv"]:
            Path(cmd[3]).mkdir()
        return reference.subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(reference, "_run", fake_run)
    reference.build_venv(venv)
    assert not (venv / "half-built").exists()  # replaced: it was the tool's own
    assert (venv / ".pytest-bfcl-made").is_file() and made[0][1:3] == ["-m", "venv"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--venv", "FILE"], "is not a folder"),
        (["--json", "DIR"], "is a folder; name a file"),
        (["--json", "DIR/missing/out.json"], "does not exist"),
        (["--per-category", "-3"], "-3 is negative"),
        (["--per-category", "many"], "is not a whole number"),
        (["--timeout", "-1"], "not a positive number of seconds"),
    ],
)
def test_bad_arguments_are_one_line_before_any_work(argv, says, tmp_path, capsys) -> None:
    (tmp_path / "FILE").write_text("", encoding="utf-8")
    argv = [a.replace("FILE", str(tmp_path / "FILE")).replace("DIR", str(tmp_path)) for a in argv]
    with pytest.raises(SystemExit) as exited:
        raise SystemExit(compare_requests([*MODEL, *argv]))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (tmp_path / "FILE").is_file()


def test_the_results_comparison_checks_its_paths_too(tmp_path, capsys) -> None:
    (tmp_path / "FILE").write_text("", encoding="utf-8")
    assert compare_results([str(tmp_path), "--venv", str(tmp_path / "FILE")]) == 2
    assert compare_results([str(tmp_path), "--json", str(tmp_path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "not a folder" in lines[0] and "is a folder" in lines[1]
