"""Markdown helpers: make untrusted text render as exactly the text it is.

Titles, evidence, suggestions and paths come from models and analyzers, i.e. from the pull
request. Rendered raw they could inject HTML (an unclosed ``<!--`` would hide the rest of a
review, including its blocking items), fake our hidden markers, start headings or lists, or turn
``__del__`` into a bold "del" (which the seed pages show). ``escape_markdown`` backslash-escapes
every character that could start such syntax, and only those (``rtp_llm`` and ``a && b`` stay as
they are, so the source remains readable), so GitHub displays the text verbatim, while code
the text marks up deliberately stays code: backtick code spans and fenced blocks pass through
untouched (their content renders literally anyway). An unclosed fence is closed at the end, so a
cut evidence paragraph cannot swallow what follows it.
"""

from __future__ import annotations

import re

__all__ = ["escape_markdown", "indent_continuation", "one_line"]

# Characters that start inline syntax wherever they stand: ``*`` emphasis (also inside words),
# ``~`` strikethrough, ``[`` links and images.
_ALWAYS_ESCAPED = frozenset("*~[")
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# ``<`` opens raw HTML, a comment or an autolink only before a letter, ``/``, ``!`` or ``?``.
_HTML_START = re.compile(r"<[A-Za-z/!?]")
# ``&`` matters only as the start of an entity or numeric character reference.
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{0,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
# At the start of a line (after up to 3 spaces): headings, quotes, list items, setext underlines,
# thematic breaks, ordered list items.
_LINE_START = re.compile(
    r"(?P<indent> {0,3})(?:(?P<marker>[#>+=\-])|(?P<digits>\d{1,9})(?P<delim>[.)]))"
)
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")


def one_line(text: str) -> str:
    """Collapse all whitespace (newlines included) into single spaces and strip the ends."""
    return " ".join(text.split())


def indent_continuation(text: str, indent: str) -> str:
    """Indent every line after the first, so a multi-line text stays inside a list item."""
    first, *rest = text.split("\n")
    return "\n".join([first, *(indent + line if line.strip() else "" for line in rest)])


def escape_markdown(text: str) -> str:
    """Escape ``text`` so that GitHub renders it as itself, code spans and fences aside.

    Args:
        text: Untrusted text, possibly with backtick code spans and fenced code blocks.

    Returns:
        Markdown whose rendering shows ``text`` (minus code span backticks and fence lines).

    Example:
        ``call `__del__` or __del__ <!-- x`` becomes
        ``call `__del__` or \\_\\_del\\_\\_ \\<!-- x``: the code span is kept, the rest
        displays verbatim.
    """
    lines = text.split("\n")
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in lines:
        if fence is None:
            opened = _FENCE_OPEN.match(line)
            if opened is None:
                prose.append(line)
                continue
            if prose:
                out.append(_escape_prose("\n".join(prose)))
                prose = []
            fence = opened.group("fence")
            out.append(line)
        else:
            out.append(line)
            if _closes(line, fence):
                fence = None
    if prose:
        out.append(_escape_prose("\n".join(prose)))
    if fence is not None:
        out.append(fence)
    return "\n".join(out)


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and len(stripped) >= len(fence)
        and set(stripped) == {fence[0]}
    )


def _escape_prose(text: str) -> str:
    """Escape text outside fenced blocks; code spans (CommonMark matching rules) stay verbatim."""
    out: list[str] = []
    i, length = 0, len(text)
    at_line_start = True
    while i < length:
        if at_line_start:
            at_line_start = False
            start = _LINE_START.match(text, i)
            if start is not None:
                out.append(start.group("indent"))
                if start.group("marker") is not None:
                    out.append("\\" + start.group("marker"))
                else:
                    out.append(start.group("digits") + "\\" + start.group("delim"))
                i = start.end()
                continue
        char = text[i]
        if char == "`":
            run_end = i
            while run_end < length and text[run_end] == "`":
                run_end += 1
            closing = _closing_run(text, run_end, run_end - i)
            if closing is None:
                # An unmatched backtick run renders literally; what follows is ordinary text.
                out.append(text[i:run_end])
                i = run_end
            else:
                out.append(text[i:closing])
                i = closing
            continue
        out.append("\\" + char if _needs_escape(text, i) else char)
        at_line_start = char == "\n"
        i += 1
    return "".join(out)


def _needs_escape(text: str, i: int) -> bool:
    char = text[i]
    if char in _ALWAYS_ESCAPED:
        return True
    if char == "_":
        # Underscores between two letters or digits never delimit emphasis (``rtp_llm``).
        return not (_is_word_char(text, i - 1) and _is_word_char(text, i + 1))
    if char == "<":
        return _HTML_START.match(text, i) is not None
    if char == "&":
        return _ENTITY.match(text, i) is not None
    if char == "\\":
        # A backslash escapes ASCII punctuation and, before a newline, makes a hard line break.
        return i + 1 < len(text) and (text[i + 1] in _ASCII_PUNCTUATION or text[i + 1] == "\n")
    return False


def _is_word_char(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isalnum()


def _closing_run(text: str, start: int, run_length: int) -> int | None:
    """The index just past the backtick run of exactly ``run_length`` that closes a code span."""
    i = text.find("`", start)
    while i != -1:
        end = i
        while end < len(text) and text[end] == "`":
            end += 1
        if end - i == run_length:
            return end
        i = text.find("`", end)
    return None
