"""The seed of a sequential run's stages: ``--bfcl-seed`` when given, else drawn from the
change under test (the CI's commit variable, or the checkout's ``git HEAD``), else for this run
alone. A fixed public seed would screen the same entries first for every change; a seed from
the commit differs per change and is the same on a rerun of it. The reports record the seed,
so ``--bfcl-seed`` reproduces the stages of any run."""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
from collections.abc import Mapping
from pathlib import Path

# CI variables naming the commit under test, in the order they are read.
COMMIT_VARIABLES = (
    "GITHUB_SHA",
    "CI_COMMIT_SHA",  # GitLab
    "BUILDKITE_COMMIT",
    "CIRCLE_SHA1",
    "GIT_COMMIT",  # Jenkins
    "BITBUCKET_COMMIT",
)

# Seeds stay below 2**48: printed and typed back as --bfcl-seed=N.
_SEED_BITS = 48


def seed_of(text: str) -> int:
    """A seed from a commit name (any text): the first 48 bits of its sha256."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:6], "big")


def stage_seed(
    given: int | None, environ: Mapping[str, str] | None = None, root: Path | None = None
) -> tuple[int, str]:
    """The stages' seed and where it came from."""
    if given is not None:
        return given, "--bfcl-seed"
    env = os.environ if environ is None else environ
    for name in COMMIT_VARIABLES:
        value = env.get(name, "").strip()
        if value:
            return seed_of(value), f"from {name}"
    head = git_head(root or Path.cwd())
    if head is not None:
        return seed_of(head), "from git HEAD"
    return secrets.randbits(_SEED_BITS), "drawn for this run"


def git_head(root: Path) -> str | None:
    """The checkout's commit, or None where there is no git or no repository."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    head = done.stdout.strip()
    return head if done.returncode == 0 and len(head) >= 7 else None
