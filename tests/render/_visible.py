"""What a saved GitHub page shows for the markdown the renderers write.

The seed pages are GitHub pages saved as text: headings lose their ``#``, list items show as
``  • `` (nested ``    • ``), code spans lose their backticks, fence lines vanish, backslash
escapes show the escaped character, HTML comments are invisible, and blocks are separated by one
blank line. ``visible_text`` mimics that for the subset of markdown the renderers produce, so a
test can compare a rendering with seed text line for line.
"""

from __future__ import annotations

import re

__all__ = ["visible_text"]

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_HEADING = re.compile(r"^#{1,6} (?P<text>.*)$")
_LIST_ITEM = re.compile(r"^(?P<indent> *)- (?P<text>.*)$")
_FENCE = re.compile(r"^ *(`{3,}|~{3,})")
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def visible_text(markdown: str) -> str:
    """Return the text a saved GitHub page shows for ``markdown`` (ending with one newline)."""
    lines: list[str] = []
    fence: str | None = None
    fence_indent = 0
    item_content_indent = 0
    for raw in _HTML_COMMENT.sub("", markdown).split("\n"):
        if fence is not None:
            if raw.strip().startswith(fence) and set(raw.strip()) == {fence[0]}:
                fence = None
            else:
                lines.append(raw[fence_indent:])
            continue
        opened = _FENCE.match(raw)
        if opened is not None:
            fence, fence_indent = opened.group(1), len(raw) - len(raw.lstrip(" "))
            continue
        if not raw.strip():
            lines.append("")
            continue
        heading = _HEADING.match(raw)
        item = _LIST_ITEM.match(raw)
        if heading is not None:
            lines.append(_inline(heading.group("text")))
            item_content_indent = 0
        elif item is not None:
            depth = len(item.group("indent")) // 2
            lines.append("  " * (depth + 1) + "• " + _inline(item.group("text")))
            item_content_indent = len(item.group("indent")) + 2
        elif item_content_indent and raw.startswith(" " * item_content_indent):
            # A continuation line of a list item: GitHub comments keep the line break.
            lines.append("  " * (item_content_indent // 2 + 1) + _inline(raw.strip()))
        else:
            lines.append(_inline(raw))
            item_content_indent = 0
    return _squeeze_blank_lines(lines)


def _inline(text: str) -> str:
    """Drop code span backticks and backslash escapes, as the rendered page does."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _ASCII_PUNCTUATION:
            out.append(text[i + 1])
            i += 2
            continue
        if char == "`":
            end = i
            while end < len(text) and text[end] == "`":
                end += 1
            run = text[i:end]
            close = _find_run(text, end, len(run))
            if close is None:
                out.append(run)
                i = end
            else:
                out.append(text[end:close])
                i = close + len(run)
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _find_run(text: str, start: int, length: int) -> int | None:
    i = text.find("`", start)
    while i != -1:
        end = i
        while end < len(text) and text[end] == "`":
            end += 1
        if end - i == length:
            return i
        i = text.find("`", end)
    return None


def _squeeze_blank_lines(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line.rstrip())
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"
