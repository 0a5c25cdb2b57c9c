"""The quickstart page's commands, run as a newcomer runs them in an empty folder: the install
line pins this release, the oracle run scores, the planted regression fails the gate with exit
status 1, and the local test server answers the run pointed at it. The server's port is
replaced by a free one."""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "quickstart.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    blocks = re.findall(r"^```bash\n(.*?)^```", PAGE, flags=re.M | re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_install_line_pins_this_release():
    version = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert version is not None
    installs = [c for c in commands() if c.startswith("pip install")]
    assert installs == [
        f'pip install "pytest-bfcl @ git+https://github.com/ORG/pytest-bfcl@v{version.group(1)}"'
    ]
    # the placeholder and the tag are explained where the line is met, with this version
    section = (REPO / "docs" / "quickstart.md").read_text().split("## 2.", 1)[0]
    explained = section.split("```", 2)[2]
    assert "**`ORG`** is a placeholder" in explained
    assert f"**`@v{version.group(1)}`** is the release tag" in explained


def test_the_quickstart_runs_as_written(tmp_path):
    port = str(free_port())
    server: subprocess.Popen[str] | None = None
    ran = []
    try:
        for line in commands():
            command, _, comment = line.partition("  # ")
            words = shlex.split(command.replace("8000", port))
            if words[0] == "python" and words[-1] == "&":  # the server, in the background
                server = subprocess.Popen(
                    [sys.executable, *words[1:-1]], cwd=tmp_path, stdout=subprocess.PIPE, text=True
                )
                assert server.stdout is not None
                assert server.stdout.readline().strip() == f"http://127.0.0.1:{port}/v1"
                continue
            if words[0] != "pytest":
                continue  # the install: this checkout is the installed plugin here
            result = subprocess.run(
                [sys.executable, "-m", "pytest", *words[1:]],
                cwd=tmp_path, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            wanted = 1 if "exit status 1" in comment else 0
            assert result.returncode == wanted, (line, result.stdout[-3000:])
            assert "BFCL V4 scores" in result.stdout, line
            if wanted:
                assert "BFCL gate: FAILED" in result.stdout
                assert re.search(r"^regressed in simple_python: ", result.stdout, flags=re.M)
            ran.append(result.stdout)
    finally:
        if server is not None:
            server.kill()
            server.wait()
    assert len(ran) == 4 and server is not None
    assert "400 passed" in ran[0]  # the page says every entry of simple_python passes
