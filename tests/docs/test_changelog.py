"""The changelog says which behaviour each release gives: an "Unreleased" section first, then one
section per version, newest first, the newest being the version the package says it is; each
headed as Keep a Changelog heads them, and the release rule of README kept beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest_bfcl

REPO = Path(__file__).resolve().parents[2]
CHANGELOG = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
SECTIONS = ("Upgrading from", "Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_every_release_has_a_section_newest_first_and_the_newest_is_this_version():
    headings = re.findall(r"^## (.+)$", CHANGELOG, flags=re.M)
    assert headings[0] == "[Unreleased]"
    releases = [re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}", h) for h in headings[1:]]
    assert all(releases), headings
    versions = [m.group(1) for m in releases if m]
    assert versions == sorted(versions, key=version_key, reverse=True)
    assert versions[0] == pytest_bfcl.__version__
    assert versions[-1] == "0.1.0"


def test_sections_within_a_release_are_keep_a_changelogs():
    for heading in re.findall(r"^### (.+)$", CHANGELOG, flags=re.M):
        assert heading.startswith(SECTIONS), heading


def test_the_release_rule_is_said_in_readme_and_the_changelog():
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert (
        "Releases are tags `vX.Y.Z` of its repository, where `X.Y.Z` is the `version` in `pyproject.toml`"
        in readme
    )
    assert "[CHANGELOG.md](CHANGELOG.md)" in readme
    assert (
        'the tag `vX.Y.Z` on the commit whose `pyproject.toml` says `version = "X.Y.Z"`'
        in " ".join(CHANGELOG.split())
    )
