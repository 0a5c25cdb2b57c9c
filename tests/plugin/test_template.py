"""The model-repo template where it will live: copied into a git repository of its own outside
this checkout, with a unit test of its own, the plugin installed as its CI files install it
(from a wheel built from this checkout, through ``$PYTEST_BFCL``), and every command of both CI
files run as written there, with the oracle: a pull request's gate, the baseline recorded on
main, and a planted regression that must fail the gate and say why."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import pytest

from pytest_bfcl.dataset.known_errors import known_errors

yaml = pytest.importorskip("yaml")  # a development dependency: reads the CI files

pytestmark = pytest.mark.e2e  # runs the plugin in pytest processes of its own

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "examples" / "model-repo"
UNIT_TEST = "def test_arithmetic():\n    assert 1 + 1 == 2\n"
PULL_REQUEST = "github.event_name == 'pull_request'"
# A row of pytest's progress: outcome letters, maybe after a node path, maybe with a percentage.
PROGRESS_ROW = re.compile(r"^(bfcl/\S+ )?[.FxXsE]+\s*(\[\s*\d+%\])?$")
MAIN = "github.event_name != 'pull_request'"


def github_steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load((TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text())
    return workflow["jobs"]["bfcl"]["steps"]


def gitlab() -> dict[str, Any]:
    return yaml.safe_load((TEMPLATE / ".gitlab-ci.yml").read_text())


def runs(condition: str | None) -> list[str]:
    """The shell lines of the GitHub job's steps that run under a condition, in order."""
    return [s["run"] for s in github_steps() if "run" in s and s.get("if") == condition]


def project_version() -> str:
    found = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert found is not None
    return found.group(1)


def test_the_ci_files_install_the_pinned_release_never_a_path_into_this_repository():
    install = runs(None)
    assert install == ['pip install "$PYTEST_BFCL" -e .']
    assert gitlab()[".bfcl"]["before_script"] == install
    pin = f"pytest-bfcl[ci] @ git+https://github.com/ORG/pytest-bfcl@v{project_version()}"
    workflow = yaml.safe_load((TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text())
    assert workflow["env"]["PYTEST_BFCL"] == pin
    assert gitlab()[".bfcl"]["variables"]["PYTEST_BFCL"] == pin
    wheel = f"pytest_bfcl-{project_version()}-py3-none-any.whl[ci]"
    for ci in (TEMPLATE / ".github" / "workflows" / "bfcl.yml", TEMPLATE / ".gitlab-ci.yml"):
        text = ci.read_text()
        assert "../" not in text and wheel in text  # the air-gapped form names this release
    import pytest_bfcl

    assert pytest_bfcl.__version__ == project_version()


def test_both_ci_files_run_the_same_commands():
    jobs = gitlab()
    pull_request = [line for line in runs(PULL_REQUEST)]
    gitlab_pr = jobs["bfcl-merge-request"]["script"]
    assert pull_request[-1] == gitlab_pr[-1]  # the gate itself; fetching main differs
    assert runs(MAIN) == jobs["bfcl-full"]["script"][:1]
    # both record the new baseline once a declared settings change lands on the default branch
    record = "python -m pytest_bfcl.record_baseline baseline/bfcl-baseline.json"
    recorded = [
        s["run"]
        for s in github_steps()
        if s.get("if", "").startswith("github.event_name == 'push'")
    ]
    assert len(recorded) == 1 and record in recorded[0] and record in jobs["bfcl-full"]["script"][1]
    assert not any(re.search(r"(^|\s)-n\b", line) for line in pull_request)  # one process


def test_ci_caches_the_dataset_and_the_responses_where_the_plugin_keeps_them():
    from pytest_bfcl.settings import Settings

    cached = [s["with"]["path"] for s in github_steps() if s.get("uses") == "actions/cache@v4"]
    assert cached == [".bfcl-data", str(Settings(model="oracle").cache_dir)]
    workflow = yaml.safe_load((TEMPLATE / ".github" / "workflows" / "bfcl.yml").read_text())
    assert workflow["env"]["BFCL_DOWNLOAD_DIR"].endswith("/.bfcl-data")
    jobs = gitlab()[".bfcl"]
    assert jobs["variables"]["BFCL_DOWNLOAD_DIR"] == "$CI_PROJECT_DIR/.bfcl-data"
    assert [c["paths"] for c in jobs["cache"][:2]] == [[".bfcl-data/"], [".bfcl-cache/"]]
    ignored = (TEMPLATE / ".gitignore").read_text().split()
    assert {"reports/", ".bfcl-cache/", ".bfcl-data/", ".pytest_cache/"} <= set(ignored)
    # a started vLLM's logs and caches (--bfcl-vllm-log's default folder)
    from pytest_bfcl.options import OPTIONS

    (log,) = [o for o in OPTIONS if o.flag == "--bfcl-vllm-log"]
    assert ".bfcl-vllm/" in log.help and ".bfcl-vllm/" in ignored


def test_the_committed_baseline_matches_the_pinned_release():
    baseline = json.loads((TEMPLATE / "baseline" / "bfcl-baseline.json").read_text())
    assert baseline["metadata"]["dataset"]["version"] == "2026.3.23"
    assert baseline["metadata"]["dataset"]["data_dir"] is None
    assert len(baseline["verdicts"]) == 3641 + 2  # single_turn and the two acme_tools entries


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _shell(cwd: Path, line: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", line],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def adopted(tmp_path_factory, data_source) -> dict[str, Any]:
    """A team's repository made from the template, cloned as CI checks it out, with the plugin
    installed by the CI files' own install line from a wheel of this checkout."""
    pytest.importorskip("build")  # a development dependency: makes the wheel installed
    root = tmp_path_factory.mktemp("adoption")
    assert REPO not in root.parents
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(root / "dist"), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (root / "dist").glob("pytest_bfcl-*.whl")

    origin = root / "team-model"
    shutil.copytree(TEMPLATE, origin)
    (origin / "tests").mkdir()
    (origin / "tests" / "test_arithmetic.py").write_text(UNIT_TEST)
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", "-A")
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "template")
    checkout = root / "checkout"
    _git(root, "clone", "-q", str(origin), str(checkout))

    # A virtualenv of its own, which sees this interpreter's packages (the plugin's
    # dependencies, offline) but gets pytest-bfcl only from the wheel.
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    (site,) = (venv / "lib").glob("python*/site-packages")
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # pytest's own command, as installing it into the virtualenv would make it
    command = venv / "bin" / "pytest"
    command.write_text(f'#!/bin/sh\nexec "{venv / "bin" / "python"}" -m pytest "$@"\n')
    command.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "GITHUB"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        PYTEST_BFCL=f"{wheel}[ci]",  # as the air-gapped form: the wheel with its ci extra
        BFCL_DOWNLOAD_DIR=str(data_source.unpacked_root.parent),  # the release, fetched once
        BFCL_MODEL_REVISION="abc123",
        CI_DEFAULT_BRANCH="main",
        PIP_NO_BUILD_ISOLATION="1",
    )
    for line in runs(None):
        installed = _shell(checkout, line, env)
        assert installed.returncode == 0, installed.stderr[-3000:]
    return {"root": root, "checkout": checkout, "env": env, "wheel": wheel}


def test_the_wheel_carries_the_data_files_and_the_version(adopted):
    names = zipfile.ZipFile(adopted["wheel"]).namelist()
    for data in ("bfcl_eval.lock.json", "oracle_known_failures.json", "smollm2_tools.jinja"):
        assert f"pytest_bfcl/data/{data}" in names
    assert adopted["wheel"].name == f"pytest_bfcl-{project_version()}-py3-none-any.whl"
    shown = _shell(adopted["checkout"], "pip show pytest-bfcl", adopted["env"]).stdout
    assert f"Version: {project_version()}" in shown
    where = _shell(
        adopted["checkout"], "python -c 'import pytest_bfcl; print(pytest_bfcl.__file__)'",
        adopted["env"],
    ).stdout  # fmt: skip
    assert str(REPO) not in where and "site-packages" in where


def test_the_teams_unit_test_runs_alone(adopted):
    checkout, env = adopted["checkout"], adopted["env"]
    for line in ("pytest", "pytest tests/", 'pytest -m "not bfcl"', "pytest -p no:bfcl"):
        result = _shell(checkout, line, env)
        assert result.returncode == 0, (line, result.stdout[-2000:], result.stderr[-2000:])
        assert "1 passed" in result.stdout and "BFCL V4 scores" not in result.stdout, line


def test_ci_commands_gate_a_pull_request_record_main_and_fail_a_regression(adopted):
    checkout, env = adopted["checkout"], adopted["env"]
    committed = (checkout / "baseline" / "bfcl-baseline.json").read_bytes()

    # main (and nightly): the full selection, with a new baseline kept as an artifact
    for line in runs(MAIN):
        result = _shell(checkout, line, env)
        assert result.returncode == 0, result.stdout[-3000:]
        assert "BFCL gate: passed" in result.stdout
    assert (checkout / "reports" / "bfcl-baseline.json").is_file()
    recorded = json.loads((checkout / "reports" / "bfcl-baseline.json").read_text())
    assert recorded["answers"]["entries"] == len(recorded["verdicts"])  # from every worker

    # a pull request, on both CI systems: main's baseline, the gate on a sample, one process
    _git(checkout, "checkout", "-q", "-b", "feature")
    for lines in (runs(PULL_REQUEST), gitlab()["bfcl-merge-request"]["script"]):
        result = _shell(checkout, " && ".join(lines), env)
        assert result.returncode == 0, result.stdout[-3000:]
        out = result.stdout
        assert "BFCL gate: passed" in out and "model revision: abc123" in out
        assert len((out + result.stderr).splitlines()) <= 150
        assert "Warning" not in out
        assert "test_arithmetic" not in out  # the job runs the benchmark, not the unit tests
    junit = (checkout / "reports" / "junit.xml").read_text()
    assert 'name="model_revision" value="abc123"' in junit

    # a planted regression: the model now fails a fifth of the entries
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'bfcl_model = "oracle"', 'bfcl_model = "oracle:fail=0.2,seed=3"'
        )
    )
    result = _shell(checkout, " && ".join(runs(PULL_REQUEST)), env)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "BFCL gate: FAILED" in result.stdout
    assert re.search(r"^regressed in \w+: ", result.stdout, flags=re.M)
    # the sequential gate said where it stopped, why, and the seed of its stages (the commit)
    assert re.search(
        r"stopped after stage \d of 3 .*the gate (already )?fails.*\(from (git HEAD|[A-Z_0-9]+);",
        result.stdout.replace("\n", " "),
    ), result.stdout[-3000:]
    # bounded but for pytest's own line per failed test in its short summary and its rows of
    # progress (the whole selection's, a run that extends to it)
    failed = int(re.findall(r"(\d+) failed", result.stdout)[-1])
    rows = [line for line in result.stdout.splitlines() if PROGRESS_ROW.match(line)]
    assert len(result.stdout.splitlines()) - len(rows) <= 150 + failed

    # nothing the commands did touches what the repository commits
    assert (checkout / "baseline" / "bfcl-baseline.json").read_bytes() == committed
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=checkout, capture_output=True, text=True
    ).stdout
    assert status.split() == ["M", "pyproject.toml"]  # the planted change alone; reports ignored

    # the first baseline of a model of the team's own, by the command docs/model-repo.md gives:
    # the committed baseline (the oracle's) is refused in one line naming it; the command
    # records the model's failures and exits 0
    pyproject.write_text(
        pyproject.read_text().replace(
            'bfcl_model = "oracle:fail=0.2,seed=3"', 'bfcl_model = "replay:results/oracle"'
        )
    )
    # stored answers of a model that fails some entries (a run of its own exits 1: no gate)
    _shell(checkout, "pytest bfcl -q --bfcl-baseline= --bfcl-results-dir=results "
           "--bfcl-model=oracle:fail=0.2,seed=3", env)  # fmt: skip
    assert (checkout / "results" / "oracle").is_dir()
    command = first_baseline_command()
    refused = _shell(checkout, "pytest bfcl", env)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert command in refused.stderr and "model differs" in refused.stderr
    first = _shell(checkout, command, env)
    assert first.returncode == 0, first.stdout[-3000:]
    assert "xfailed" in first.stdout and " failed" not in first.stdout.splitlines()[-1]
    verdicts = json.loads((checkout / "baseline" / "bfcl-baseline.json").read_text())["verdicts"]
    assert not all(verdicts.values())  # the model's failures, recorded
    assert _shell(checkout, "pytest bfcl", env).returncode == 0  # it fits from now on


def first_baseline_command() -> str:
    """The command under docs/model-repo.md's heading that says "first baseline"."""
    text = (REPO / "docs" / "model-repo.md").read_text()
    heading = re.search(r"^##+ .*first baseline.*$", text, re.M | re.I)
    assert heading is not None
    block = re.search(r"```bash\n(.*?)```", text[heading.end() :], re.S)
    assert block is not None
    return block.group(1).strip()


# -- adopting the template into a repository that has its own files ---------------------------

TEAM_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "team-model"
version = "1.4.0"
dependencies = ["numpy>=1.22", "requests>=2.28"]

[project.optional-dependencies]
train = ["torch"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra"
markers = ["slow: the team's long tests"]

[tool.ruff]
line-length = 88
"""


def adoption_blocks() -> dict[str, str]:
    """The fenced blocks of docs/model-repo.md's adoption section, by language."""
    page = (REPO / "docs" / "model-repo.md").read_text()
    section = page.split("## Adopting it into an existing repository", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^```(\w+)\n(.*?)^```", section, flags=re.M | re.S))


def load_toml(text: str) -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads(text)


def test_the_adoption_steps_are_the_templates_own_settings_and_ignores():
    blocks = adoption_blocks()
    added = load_toml(blocks["toml"])
    template = load_toml((TEMPLATE / "pyproject.toml").read_text())
    ini = template["tool"]["pytest"]["ini_options"]
    assert set(added) == {k for k in ini if k.startswith("bfcl_")}
    assert {k: v for k, v in added.items() if k != "bfcl_category"} == {
        k: ini[k] for k in added if k != "bfcl_category"
    }
    assert set(blocks["gitignore"].split()) <= set((TEMPLATE / ".gitignore").read_text().split())
    assert ".bfcl-vllm/" in blocks["gitignore"].split()
    # the model package lists no test tool; the plugin's ci extra brings pytest-xdist for -n auto
    assert not [d for d in template["project"]["dependencies"] if d.startswith("pytest")]
    ours = load_toml((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert [d for d in ours["ci"] if d.startswith("pytest-xdist")]
    assert any(re.search(r"\s-n auto\b", line) for line in runs(MAIN))
    assert (
        f"pytest-bfcl[ci] @ git+https://github.com/ORG/pytest-bfcl@v{project_version()}"
        in (blocks["bash"])
    )


def test_adopting_into_an_existing_repository_keeps_everything_of_the_teams(tmp_path):
    blocks = adoption_blocks()
    team = tmp_path / "team-model"
    (team / "tests").mkdir(parents=True)
    (team / "tests" / "test_arithmetic.py").write_text(UNIT_TEST)
    (team / ".gitignore").write_text("dist/\n.venv/\n")
    header = "[tool.pytest.ini_options]\n"
    # the adoption as the page says: the keys under the existing table, the ignores appended,
    # the workflow copied beside the team's own
    (team / "pyproject.toml").write_text(TEAM_PYPROJECT.replace(header, header + blocks["toml"], 1))
    with (team / ".gitignore").open("a") as ignores:
        ignores.write(blocks["gitignore"])
    (team / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(TEMPLATE / ".github" / "workflows" / "bfcl.yml", team / ".github" / "workflows")

    adopted = load_toml((team / "pyproject.toml").read_text())
    before = load_toml(TEAM_PYPROJECT)
    assert (
        adopted["project"] == before["project"]
        and adopted["tool"]["ruff"] == before["tool"]["ruff"]
    )
    ini = adopted["tool"]["pytest"]["ini_options"]
    assert {k: v for k, v in ini.items() if not k.startswith("bfcl_")} == before["tool"]["pytest"][
        "ini_options"
    ]
    assert (team / ".gitignore").read_text().startswith("dist/\n.venv/\n")

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
            cwd=team, capture_output=True, text=True, timeout=600,
        )  # fmt: skip

    own = pytest_run()  # the team's tests alone, with its own addopts (-ra) still applied
    assert own.returncode == 0 and "1 passed" in own.stdout, own.stdout[-2000:]
    assert "BFCL V4 scores" not in own.stdout
    small = "--bfcl-category=live_parallel"
    first = pytest_run("bfcl", small, "-o", "bfcl_baseline=",
                       "--bfcl-save-baseline=baseline/bfcl-baseline.json")  # fmt: skip
    assert first.returncode == 0, first.stdout[-2000:]
    gated = pytest_run("bfcl", small)
    assert gated.returncode == 0 and "BFCL gate: passed" in gated.stdout, gated.stdout[-2000:]
    assert (team / "reports" / "bfcl-report.html").is_file()


# A model wrapping the oracle that answers in text for the entries listed in $TEXT_ANSWERS: a
# pull request that turns passing entries into text answers.
TEXT_FOR_SOME = """

@pytest.hookimpl(optionalhook=True)
def pytest_bfcl_make_model(spec, settings, scoring, source, hook):
    if spec != "text-for-some":
        return None
    from pytest_bfcl.models.base import Generation
    from pytest_bfcl.models.oracle import OracleModel

    listed = set(Path(os.environ["TEXT_ANSWERS"]).read_text().split())

    class TextForSome(OracleModel):
        name = "text-for-some"

        def generate(self, task):
            if task.entry.id in listed:
                return Generation(id=task.entry.id, result="Sorry, I will not call anything.")
            return super().generate(task)

    return TextForSome(scoring)
"""
TEXT_ANSWER = "Sorry, I will not call anything."


def test_a_red_pull_request_shows_mains_answers_and_compares_offline(adopted):
    """A pull request that turns 150 passing entries into text answers: its junit text shows
    main's answer beside the new one for its regressions, and the compare command, given main's
    baseline and the pull request's run, fails as the gate did, in under 150 lines."""
    root, env = adopted["root"], adopted["env"]
    checkout = root / "review"
    _git(root, "clone", "-q", str(root / "team-model"), str(checkout))
    _git(checkout, "checkout", "-q", "-b", "text-answers")
    pull_request = " && ".join(runs(PULL_REQUEST))

    # the sample the pull request's gate runs, as the unchanged model answers it
    result = _shell(checkout, pull_request, env)
    assert result.returncode == 0, result.stdout[-3000:]
    sampled = json.loads((checkout / "reports" / "bfcl-run.json").read_text())
    main = json.loads((checkout / "reports" / "main-baseline.json").read_text())
    assert main["answers"]["entries"] == len(main["verdicts"])  # the committed one has them
    calls_due = [
        i
        for i, valid in sampled["verdicts"].items()
        if valid
        and main["verdicts"].get(i)
        and "relevance" not in i
        and "acme" not in i
        and i not in known_errors()  # left out of the gate: not a regression there
    ]
    assert len(calls_due) >= 150
    (root / "text-answers.txt").write_text("\n".join(calls_due[:150]))
    shutil.copy(checkout / "reports" / "bfcl-run.json", root / "unchanged-run.json")

    # the pull request: 150 entries now answered with text
    with open(checkout / "conftest.py", "a") as conftest:
        conftest.write(TEXT_FOR_SOME)
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('bfcl_model = "oracle"', 'bfcl_model = "text-for-some"')
    )
    red_env = {**env, "TEXT_ANSWERS": str(root / "text-answers.txt")}
    result = _shell(checkout, pull_request, red_env)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "BFCL gate: FAILED" in result.stdout

    # every flipped entry: a failure where the gate failed on its comparison, an expected
    # failure within the noise elsewhere; both keep the explanation and the two answers
    cases = list(ET.parse(checkout / "reports" / "junit.xml").getroot().iter("testcase"))
    failed = [c.find("failure") for c in cases if c.find("failure") is not None]
    noise = [c.find("skipped") for c in cases if c.find("skipped") is not None]
    blocked = [
        f.text or ""
        for f in failed
        if (f.text or "").startswith("REGRESSION (passed in the baseline")
    ]
    within_noise = [
        s.text or ""
        for s in noise
        if s.get("message", "").startswith("worse than the baseline within the noise")
    ]
    regressions = blocked + within_noise
    # the sequential gate asks what its stages need: the flipped entries it asked
    red_run = json.loads((checkout / "reports" / "bfcl-run.json").read_text())["verdicts"]
    flipped = [i for i in calls_due[:150] if i in red_run]
    assert flipped and not any(red_run[i] for i in flipped)
    assert len(regressions) == len(flipped) and blocked  # the gate failed on some of them
    shown = [
        t
        for t in regressions
        if re.search(r"^  baseline: \[\{", t, re.M) and f"\n  now:      {TEXT_ANSWER}" in t
    ]
    assert len(shown) >= 0.9 * len(regressions), regressions[0]

    # the two stored runs compared without running anything: as red as the gate, bounded
    compare = "python -m pytest_bfcl.compare reports/main-baseline.json reports/bfcl-run.json"
    result = _shell(checkout, compare, env)
    assert result.returncode == 1, (result.stdout[-3000:], result.stderr[-2000:])
    lines = (result.stdout + result.stderr).splitlines()
    assert len(lines) <= 150 and lines[-1] == "compare: FAILED"
    assert f"worse now: {len(flipped)}" in lines
    starts = tuple(f"{i} [" for i in flipped)
    at = next(n for n, line in enumerate(lines) if line.startswith(starts))
    assert (
        lines[at + 1].startswith("  baseline: [{") and lines[at + 2] == f"  now:      {TEXT_ANSWER}"
    )
    # a run compared with itself, and the unchanged pull request with main: no drop
    for pair in (
        "reports/bfcl-run.json reports/bfcl-run.json",
        f"reports/main-baseline.json {root / 'unchanged-run.json'}",
    ):
        result = _shell(checkout, f"python -m pytest_bfcl.compare {pair}", env)
        assert result.returncode == 0, (pair, result.stdout[-3000:], result.stderr[-2000:])
        assert len(result.stdout.splitlines()) <= 150


def test_a_pull_request_asks_the_endpoint_s_new_model_never_mains_cached_answers(adopted, dataset):
    """The team gates a model behind an endpoint: main's run fills the response cache, the
    pull request's job runs with that cache restored while the endpoint serves a worse model
    under the same name. The pull request asks the new model (its revision is another commit)
    and fails; the job says what the restored cache can answer."""
    from pytest_bfcl.dataset.categories import expand_categories
    from pytest_bfcl.testing.fake_openai import FakeOpenAI

    root, env = adopted["root"], adopted["env"]
    checkout = root / "endpoint"
    _git(root, "clone", "-q", str(root / "team-model"), str(checkout))
    good = list(expand_categories("single_turn"))
    worse = ["simple_python", "multiple", "parallel", "irrelevance"]
    with FakeOpenAI(dataset, good) as server:
        pyproject = checkout / "pyproject.toml"
        pyproject.write_text(
            pyproject.read_text().replace(
                'bfcl_model = "oracle"',
                f'bfcl_model = "test-model"\nbfcl_base_url = "{server.base_url}"',
            )
        )
        endpoint_env = {**env, "OPENAI_API_KEY": "sk-local", "BFCL_MODEL_REVISION": "main-sha"}
        first = _shell(checkout, first_baseline_command(), endpoint_env)
        assert first.returncode == 0, first.stdout[-3000:]
        _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "endpoint")
        _git(checkout, "update-ref", "refs/remotes/origin/main", "HEAD")  # as merged on main
        shutil.rmtree(checkout / ".bfcl-cache", ignore_errors=True)
        main = _shell(checkout, " && ".join(runs(MAIN)), endpoint_env)
        assert main.returncode == 0, main.stdout[-3000:]
        asked_by_main = server.total_requests()
    assert asked_by_main > 3000 and (checkout / ".bfcl-cache").is_dir()  # main's answers kept

    with FakeOpenAI(dataset, worse) as server:  # the endpoint's new model, the same name
        pyproject.write_text(
            re.sub(r'bfcl_base_url = ".*"', f'bfcl_base_url = "{server.base_url}"',
                   pyproject.read_text())
        )  # fmt: skip
        pr_env = {**endpoint_env, "BFCL_MODEL_REVISION": "pr-sha", "RESTORED": "main-cache"}
        result = _shell(checkout, " && ".join(runs(PULL_REQUEST)), pr_env)
        asked_by_pr = server.total_requests()
    assert result.returncode == 1, result.stdout[-3000:]
    out = result.stdout
    assert "BFCL gate: FAILED" in out and "from the cache" not in out
    assert asked_by_pr > 0 and "model revision: pr-sha" in out
    assert "response cache restored: main-cache; it answers model revision pr-sha only" in out
