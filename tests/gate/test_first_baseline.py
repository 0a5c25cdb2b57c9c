"""A team's first baseline in one documented command: the command docs/model-repo.md gives
records it (exit 0, the file written, though entries fail), and a committed baseline that does
not fit the run (another model, temperature, mode) is refused in one line naming it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gate_scenario import ids, write_results

from pytest_bfcl.session.start import first_baseline_command
from pytest_bfcl.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "model-repo.md"


def _documented_command() -> str:
    """The command under the heading that says "first baseline"."""
    text = DOC.read_text()
    heading = re.search(r"^##+ .*first baseline.*$", text, re.M | re.I)
    assert heading is not None, "docs/model-repo.md has no section on the first baseline"
    block = re.search(r"```bash\n(.*?)```", text[heading.end() :], re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if "--bfcl-save-baseline" in line]
    assert len(commands) == 1
    return commands[0].split("#")[0].strip()


def test_the_docs_and_the_refusal_name_the_same_command(monkeypatch):
    monkeypatch.chdir(REPO / "examples" / "model-repo")
    settings = Settings(model="oracle", baseline_path=Path("baseline/bfcl-baseline.json").resolve())
    named = first_baseline_command(settings)
    assert named == "pytest bfcl --bfcl-baseline= --bfcl-save-baseline=baseline/bfcl-baseline.json"
    assert _documented_command() == named


def test_the_first_baseline_records_failing_entries_and_exits_zero(
    pytester, dataset, data_source, tmp_path
):
    results = write_results(tmp_path / "real", dataset, ids(range(20)))
    baseline = pytester.path / "baseline" / "bfcl-baseline.json"
    args = _documented_command().split()[1:]  # after "pytest"
    args = [a for a in args if a != "bfcl"]  # no bfcl/ folder here: the options ask for them
    result = pytester.runpytest(
        *args,
        f"--bfcl-model=replay:{results}",
        f"--bfcl-data={data_source.data_dir}",
        "--bfcl-category=simple_python",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    result.assert_outcomes(passed=380, xfailed=20)
    verdicts = json.loads(baseline.read_text())["verdicts"]
    assert sum(not v for v in verdicts.values()) == 20
    out = result.stdout.str()
    assert "BFCL failures: 20" in out  # listed all the same: what the model gets wrong


def _oracle_baseline(pytester, data_source) -> tuple[Path, list[str]]:
    baseline = pytester.path / "baseline" / "bfcl-baseline.json"
    common = [f"--bfcl-data={data_source.data_dir}", "--bfcl-category=simple_python"]
    common += ["-p", "no:cacheprovider"]
    saved = pytester.runpytest("--bfcl-model=oracle", f"--bfcl-save-baseline={baseline}", *common)
    assert saved.ret == 0
    return baseline, common


def _refusal(result) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.str().splitlines() if "does not fit" in line]
    assert len(lines) == 1
    assert (
        "pytest bfcl --bfcl-baseline= --bfcl-save-baseline=baseline/bfcl-baseline.json"
        in (lines[0])
    )
    return lines[0]


def test_another_model_is_refused_naming_the_command(pytester, dataset, data_source, tmp_path):
    baseline, common = _oracle_baseline(pytester, data_source)
    results = write_results(tmp_path / "real", dataset, ids(range(20)))
    refused = pytester.runpytest(
        f"--bfcl-model=replay:{results}", f"--bfcl-baseline={baseline}", *common
    )
    assert "model differs: baseline 'oracle'" in _refusal(refused)


@pytest.mark.parametrize(
    ("recorded", "option", "message"),
    [
        ({"temperature": 0.7}, None, "temperature differs"),  # an endpoint's, sampled
        ({}, "--bfcl-mode=prompt", "mode differs"),
    ],
)
def test_another_temperature_or_mode_is_refused_naming_the_command(
    pytester, data_source, recorded, option, message
):
    baseline, common = _oracle_baseline(pytester, data_source)
    data = json.loads(baseline.read_text())
    data["metadata"].update(recorded)
    baseline.write_text(json.dumps(data))
    extra = [option] if option else []
    refused = pytester.runpytest(
        "--bfcl-model=oracle", f"--bfcl-baseline={baseline}", *extra, *common
    )
    assert message in _refusal(refused)
