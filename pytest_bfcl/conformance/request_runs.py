"""Both harnesses asking one recording server the same slice of a category: the official
``bfcl generate`` (in the evaluator's virtualenv, :mod:`.reference`) and pytest-bfcl (a
subprocess started from an empty directory), each pointed at the server in turn; what each
sent is taken from the server after its run.

The slice is the same entries on both sides: the official harness reads them from its id file
(``test_case_ids_to_generate.json`` with ``--run-ids``), pytest-bfcl keeps them with a
``conftest.py`` that deselects the rest. A memory category's slice also lists, for the official
harness, the prerequisite conversations of its scenarios (pytest-bfcl runs those on its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pytest_bfcl.conformance.reference import KEY_PLACEHOLDER, SetupError, evaluator_env
from pytest_bfcl.dataset.categories import CATEGORIES, Kind
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.files import read_file_tail
from pytest_bfcl.testing.recording_server import RecordingServer

ID_FILE = "test_case_ids_to_generate.json"
REQUESTS_FILE = "requests.jsonl"  # each side's recorded requests, in its folder
# pytest's exit statuses that still mean "the run happened": all passed, some failed.
_RUN_COMPLETED = (0, 1)
_TAIL_LINES = 20
_SLICE_CONFTEST = '''"""Keeps the entries of the request comparison's slice."""
import json
from pathlib import Path

KEPT = set(json.loads((Path(__file__).parent / "slice.json").read_text()))


def pytest_collection_modifyitems(config, items):
    kept = [item for item in items if item.nodeid.rsplit("::", 1)[-1] in KEPT]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
'''


class SideRun(BaseModel):
    """What one harness sent for one category, and how its run went."""

    requests: list[dict[str, Any]]
    seconds: float
    problem: str | None = None  # why the run did not complete (what it sent is still kept)


def choose_slice(dataset: Dataset, category: str, count: int | None) -> list[str]:
    """``count`` entries spread evenly over the category (all of them for ``None``)."""
    ids = [entry.id for entry in dataset.entries(category)]
    if count is None or count >= len(ids):
        return ids
    step = len(ids) / count
    return [ids[int(index * step)] for index in range(count)]


def official_ids(dataset: Dataset, category: str, ids: Sequence[str]) -> list[str]:
    """The ids the official harness is given: a memory slice's scenarios' prerequisite
    conversations first."""
    if CATEGORIES[category].kind is not Kind.MEMORY:
        return list(ids)
    entries = dataset.entry_map(category)
    scenarios = dict.fromkeys(entries[i].scenario for i in ids if entries[i].scenario)
    prerequisites = [
        p.id for s in scenarios if s for p in dataset.memory_prerequisites(category, s)
    ]
    return prerequisites + list(ids)


def _tail(path: Path) -> str:
    try:
        text = read_file_tail(path, 64 << 10).decode("utf-8", errors="replace")
    except OSError:  # none written, or none that is a file
        text = ""
    return "\n".join(text.strip().splitlines()[-_TAIL_LINES:])


def _run_logged(
    cmd: list[str], cwd: Path, env: dict[str, str], log: Path, timeout: float
) -> tuple[int | None, float]:
    """The exit status (None: it ran past ``timeout`` and was stopped) and the seconds."""
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        try:
            proc = subprocess.run(
                cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - started
    return proc.returncode, time.monotonic() - started


def _recorded(server: RecordingServer, root: Path) -> list[dict[str, Any]]:
    """The requests the server recorded since the last take, also kept in the side's folder
    (``requests.jsonl``, one request a line) for a closer look with ``--keep``."""
    sent = [r.body for r in server.take()]
    lines = "".join(json.dumps(body, ensure_ascii=False) + "\n" for body in sent)
    (root / REQUESTS_FILE).write_text(lines, encoding="utf-8")
    return sent


def run_official(
    python: Path,
    server: RecordingServer,
    model_name: str,
    category: str,
    ids: Sequence[str],
    workdir: Path,
    key_names: Sequence[str] = (),
    timeout: float = 3600,
    threads: int = 8,
    local_model: Path | None = None,
) -> SideRun:
    """``bfcl generate`` of the slice against the server, in a fresh project root.
    ``local_model``: an open-weight entry's checkpoint folder (its tokenizer and config): the
    harness asks the server as for a local model it did not start."""
    root = workdir / "official" / category
    root.mkdir(parents=True, exist_ok=True)
    (root / ID_FILE).write_text(json.dumps({category: list(ids)}), encoding="utf-8")
    env = evaluator_env(root, key_names)
    env["OPENAI_BASE_URL"] = server.base_url
    env["OPENAI_API_KEY"] = KEY_PLACEHOLDER
    cmd = [str(python), "-m", "bfcl_eval", "generate", "--model", model_name, "--run-ids"]
    cmd += ["--num-threads", str(threads), "--allow-overwrite"]
    if local_model is not None:
        env["REMOTE_OPENAI_BASE_URL"] = server.base_url
        cmd += ["--skip-server-setup", "--local-model-path", str(local_model)]
    log = root / "generate.log"
    server.take()
    status, seconds = _run_logged(cmd, root, env, log, timeout)
    sent = _recorded(server, root)
    problem = None
    if status is None:
        problem = f"bfcl generate ran past {timeout:.0f} s"
    elif status != 0:
        problem = f"bfcl generate failed (exit {status}): {_tail(log)}"
    return SideRun(requests=sent, seconds=seconds, problem=problem)


def ours_command(
    server: RecordingServer, model_name: str, leaderboard_model: str, category: str
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-header",
        "-rN",
        f"--bfcl-model={model_name}",
        f"--bfcl-leaderboard-model={leaderboard_model}",
        f"--bfcl-base-url={server.base_url}",
        f"--bfcl-category={category}",
        "--bfcl-no-cache",
        "--bfcl-web=off",
        "--bfcl-retries=1",
    ]


def run_ours(
    server: RecordingServer,
    model_name: str,
    leaderboard_model: str,
    category: str,
    ids: Sequence[str],
    workdir: Path,
    timeout: float = 3600,
    extra_args: Sequence[str] = (),
) -> SideRun:
    """pytest-bfcl on the slice against the server, from a directory of its own."""
    root = workdir / "ours" / category
    root.mkdir(parents=True, exist_ok=True)
    (root / "slice.json").write_text(json.dumps(list(ids)), encoding="utf-8")
    (root / "conftest.py").write_text(_SLICE_CONFTEST, encoding="utf-8")
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)  # the user's defaults would change what runs
    env["OPENAI_API_KEY"] = KEY_PLACEHOLDER
    cmd = ours_command(server, model_name, leaderboard_model, category) + list(extra_args)
    log = root / "pytest-bfcl.log"
    server.take()
    status, seconds = _run_logged(cmd, root, env, log, timeout)
    sent = _recorded(server, root)
    problem = None
    if status is None:
        problem = f"pytest-bfcl ran past {timeout:.0f} s"
    elif status not in _RUN_COMPLETED:
        problem = f"pytest-bfcl did not complete (exit {status}): {_tail(log)}"
    return SideRun(requests=sent, seconds=seconds, problem=problem)


def check_comparable(category: str) -> None:
    """Categories whose requests cannot be compared here, refused by name."""
    if category not in CATEGORIES:
        raise SetupError(f"unknown category {category!r}")
    if CATEGORIES[category].kind is Kind.EXECUTABLE:
        raise SetupError(f"{category}: not a category of the pinned release's harness")
    if CATEGORIES[category].kind is Kind.WEB_SEARCH:
        raise SetupError(
            f"{category}: the official harness searches the live web (SerpAPI) for its tool "
            "results, so its conversations cannot be replayed here"
        )
