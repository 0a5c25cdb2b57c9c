"""What a hostile server log folder costs a whole run, as a user runs it (a plain
``--bfcl-server-cmd`` run of the local test server from a checkout outside this repository):
a pid file linked to ``/dev/zero``, a FIFO, a claim on pid 0 and one whose temporary folder is
the checkout through ``..``. Each is one line; the run's peak memory and time are those of the
same run with a clean folder (70 MB, 1.7 s CPU both, measured; before, the ``/dev/zero``
link alone took 1.3 GB in 2 s and grew until memory ran out, pid 0 signalled the run's own
process group and the ``..`` claim removed the checkout).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

PEAK_SLACK_MB = 30
REPO = Path(__file__).resolve().parents[1]


def checkout(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / name
    for part in ("src", ".git", ".bfcl-server"):
        (repo / part).mkdir(parents=True)
    (repo / "src" / "model.py").write_text("weights = 1\n")
    return repo


def hostile(logs: Path) -> None:
    (logs / "zero.log.pid").symlink_to("/dev/zero")
    os.mkfifo(logs / "fifo.log.pid")
    claim = {
        "kind": "pytest-bfcl started server", "name": "model server", "start": 1.0,
        "command": "0" * 64, "salt": "0" * 32, "owner": 99999, "owner_start": 1.0,
    }  # fmt: skip
    (logs / "zero-pid.log.pid").write_text(
        json.dumps({**claim, "pid": 0, "log": str(logs / "zero-pid.log")})
    )
    dead = {"pid": 99998, "log": str(logs / "up.log"), "temp_dir": f"{logs}/sub/../.."}
    (logs / "up.log.pid").write_text(json.dumps({**claim, **dead}))


def run(repo: Path) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds, peak RSS (KB) and stderr of one run in ``repo``."""
    server = f"{sys.executable} -m pytest_bfcl.testing.fake_openai live_simple --port {{port}}"
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=no",
        "--bfcl-model=test-model", "--bfcl-category=live_simple", "--bfcl-no-cache",
        f"--bfcl-server-cmd={server}", "--bfcl-server-log=.bfcl-server/server.log",
    ]  # fmt: skip
    script = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss)\n"
        "sys.stderr.write(p.stderr)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", script, *command],
        cwd=repo, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    wall, cpu, peak = done.stdout.split()
    return float(wall), float(cpu), int(peak), done.stderr


def test_a_hostile_log_folder_costs_the_run_nothing(tmp_path):
    clean = run(checkout(tmp_path, "clean"))
    repo = checkout(tmp_path, "hostile")
    hostile(repo / ".bfcl-server")
    started = time.perf_counter()
    wall, cpu, peak, err = run(repo)
    print(
        f"clean: {clean[0]:.2f} s wall, {clean[1]:.2f} s CPU, {clean[2] / 1024:.0f} MB peak; "
        f"hostile: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak / 1024:.0f} MB peak "
        f"({time.perf_counter() - started:.1f} s)"
    )
    lines = [line for line in err.splitlines() if "ignored the pid file" in line]
    assert len(lines) == 3, err  # /dev/zero, the FIFO, pid 0 (the .. claim is a stale record)
    assert (peak - clean[2]) / 1024 < PEAK_SLACK_MB
    assert (repo / "src" / "model.py").is_file() and (repo / ".git").is_dir()
