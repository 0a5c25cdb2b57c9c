"""The fetch tool's three views of a page: the raw text, markdown, and the visible text."""

from __future__ import annotations

from typing import Any

MODES = ("raw", "markdown", "truncate")


def _bs4() -> Any:
    try:
        import bs4
    except ImportError as exc:
        raise ImportError(
            f"the markdown and truncate fetch modes need pytest-bfcl[web] ({exc})"
        ) from exc
    return bs4


def to_markdown(html: str) -> str:
    # markdownify (MIT) stands in for the benchmark's converter; headings are written with
    # '#' as that one does. Content is model input, never scored, so small layout differences
    # in the markdown do not change a verdict.
    try:
        from markdownify import markdownify
    except ImportError as exc:
        raise ImportError(f"the markdown fetch mode needs pytest-bfcl[web] ({exc})") from exc
    return str(markdownify(html, heading_style="ATX"))


def visible_text(html: str) -> str:
    """The page's text without scripts and styles, one piece per line (html.parser)."""
    soup = _bs4().BeautifulSoup(html, "html.parser")
    for element in soup(["script", "style"]):
        element.extract()
    return str(soup.get_text(separator="\n", strip=True))


def render(text: str, mode: str) -> str:
    if mode == "raw":
        return text
    if mode == "markdown":
        return to_markdown(text)
    if mode == "truncate":
        return visible_text(text)
    raise ValueError(f"Unsupported mode: {mode}")
