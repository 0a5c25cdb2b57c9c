"""The documentation cites only what exists: every relative link and anchor of README, the
changelog, the contributing guide, the template's README and the docs pages reaches a file
and a heading; sections of README named in prose are README's headings; repository paths
named in code spans exist; and the options reference is what its generator writes from the
option tables."""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [
    REPO / "README.md",
    REPO / "CHANGELOG.md",
    REPO / "CONTRIBUTING.md",
    REPO / "examples" / "model-repo" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
PATH_SPAN = re.compile(
    r"`((?:pytest_bfcl|tests|benchmarks|tools|docs|data|examples|\.ci)/[^`\s]*)`"
)


def prose(path: Path) -> str:
    """The page without its fenced code blocks (commands and output, not citations), with the
    files it includes (``--8<-- "CHANGELOG.md"``, from the repository's root) in place."""
    text = re.sub(
        r'^--8<-- "([^"]+)"$',
        lambda m: (REPO / m.group(1)).read_text(encoding="utf-8"),
        path.read_text(encoding="utf-8"),
        flags=re.M,
    )
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def slug(heading: str) -> str:
    """A heading's anchor as Python-Markdown's table of contents makes it (MkDocs; GitHub's
    agrees for the headings these pages use)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} +(.+?) *#*$", prose(path), flags=re.M)
    return {slug(h) for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_reaches_a_file_and_a_heading(page):
    if not page.exists():
        pytest.skip(f"{page.name} is not in this checkout")
    broken = []
    for target in LINK.findall(prose(page)):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading in {linked.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_readme_sections_named_in_prose_are_readmes_headings(page):
    if not page.exists():
        pytest.skip(f"{page.name} is not in this checkout")
    named = re.findall(r"README(?:'s)?,? \"([^\"]+)\"", " ".join(prose(page).split()))
    missing = [name for name in named if slug(name) not in anchors(REPO / "README.md")]
    assert not missing, f"{page.relative_to(REPO)} names README sections it lacks: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_repository_paths_in_code_spans_exist(page):
    if not page.exists():
        pytest.skip(f"{page.name} is not in this checkout")
    missing = []
    for cited in PATH_SPAN.findall(prose(page)):
        path = cited.split("::")[0].rstrip(".,;:")
        if any(c in path for c in "*{<[") or path.startswith("examples/model-repo/reports"):
            continue  # patterns and placeholders, not paths
        if not (REPO / path).exists():
            missing.append(cited)
    assert not missing, f"{page.relative_to(REPO)} cites paths that do not exist: {missing}"


def test_the_options_page_is_what_its_generator_writes_from_the_option_tables():
    spec = importlib.util.spec_from_file_location(
        "options_reference", REPO / "tools" / "options_reference.py"
    )
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    current = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    assert generator.MARKER in current
    assert current == generator.page(current), "run: python tools/options_reference.py"


def test_a_stale_options_page_is_told_apart(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "options_reference", REPO / "tools" / "options_reference.py"
    )
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    current = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    stale = current.replace("| `--bfcl-seed` |", "| `--bfcl-seeds` |")
    assert stale != current and generator.page(stale) == current


def test_the_docs_extra_builds_the_site_with_mkdocs_and_its_theme_alone():
    """``pip install -e '.[docs]'`` (what docs/index.md says) brings every theme, plugin and
    Markdown extension mkdocs.yml names: MkDocs and Material for MkDocs, nothing else."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    yaml = pytest.importorskip("yaml")
    import importlib.metadata as metadata

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = extras["optional-dependencies"]
    names = [re.split(r"[<>=!\[ ]", d, maxsplit=1)[0] for d in extras["docs"]]
    assert names == ["mkdocs", "mkdocs-material"]
    assert any("docs" in d for d in extras["dev"] if d.startswith("pytest-bfcl["))
    assert "pip install -e '.[docs]'" in (REPO / "docs" / "index.md").read_text()

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!ENV", lambda loader, node: None)
    site = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=Loader)
    dists = [metadata.distribution(n) for n in names]
    provided = {(e.group, e.name) for d in dists for e in d.entry_points}
    assert ("mkdocs.themes", site["theme"]["name"]) in provided
    for plugin in site["plugins"]:
        name = plugin if isinstance(plugin, str) else next(iter(plugin))
        assert {("mkdocs.plugins", name), ("mkdocs.plugins", f"material/{name}")} & provided, name
    # the pymdownx extensions come with the theme (a requirement of mkdocs-material)
    required = {re.split(r"[<>=!; ]", r, maxsplit=1)[0] for d in dists for r in d.requires or []}
    for extension in site["markdown_extensions"]:
        module = extension if isinstance(extension, str) else next(iter(extension))
        if module.startswith("pymdownx."):
            assert "pymdown-extensions" in required, module
