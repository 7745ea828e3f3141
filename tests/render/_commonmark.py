"""Render markdown with a real CommonMark implementation and read back the text a reader sees.

``markdown-it-py`` (a dependency of ``rich``) with GitHub's strikethrough enabled stands in for
GitHub's renderer; it is how the escaping tests check that text shows up verbatim.
"""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt

__all__ = ["rendered_text"]

_MARKDOWN = MarkdownIt("commonmark").enable("strikethrough")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append("<!--")


def rendered_text(markdown: str) -> tuple[str, list[str]]:
    """The visible text of ``markdown`` and the HTML tags (and comments) it rendered to."""
    collector = _TextCollector()
    collector.feed(_MARKDOWN.render(markdown))
    collector.close()
    return "".join(collector.parts).strip(), collector.tags
