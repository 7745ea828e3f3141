"""Reading back, from a request's text, the diff the pipeline showed the model.

The simulator answers from the case's truth, but it places false positives and writes claims
from what the request actually shows: the diff in the model's format
(``=== FILE n: path (status) ===`` headers, then ``<old> <new> |<marker><text>`` lines; see
``assay.llm._prompting.format_diff_for_model``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["VisibleDiff", "read_visible_diff"]

_FILE_HEADER = re.compile(r"^=== FILE \d+: (?P<path>.+) \((?P<status>[a-z]+)\) ===$")
_NUMBERS = re.compile(r"^[ 0-9]*$")


@dataclass
class VisibleDiff:
    """Head lines the request shows, by file."""

    head_lines: dict[str, dict[int, str]] = field(default_factory=dict)
    """Path → head line number → text (added and context lines)."""
    added: dict[str, list[int]] = field(default_factory=dict)
    """Path → added head line numbers, in order."""

    @property
    def paths(self) -> list[str]:
        return list(self.head_lines)

    def line_text(self, path: str, line: int) -> str | None:
        return self.head_lines.get(path, {}).get(line)


def read_visible_diff(text: str) -> VisibleDiff:
    """Parse every diff file block found in ``text`` (anything else is ignored).

    Args:
        text: A request's user text.

    Returns:
        The head lines shown, by path (a path shown twice keeps both blocks' lines).
    """
    diff = VisibleDiff()
    current: str | None = None
    for raw in text.splitlines():
        header = _FILE_HEADER.match(raw)
        if header:
            current = header.group("path")
            diff.head_lines.setdefault(current, {})
            diff.added.setdefault(current, [])
            continue
        if current is None:
            continue
        parsed = _parse_line(raw)
        if parsed is None:
            if raw.startswith(("@@", "(")) or not raw.strip():
                continue
            current = None  # the file block ended
            continue
        new, marker, content = parsed
        if new is None or marker == "-":
            continue
        diff.head_lines[current][new] = content
        if marker == "+":
            diff.added[current].append(new)
    return diff


def _parse_line(raw: str) -> tuple[int | None, str, str] | None:
    """``<old> <new> |<marker><text>`` → (new, marker, text); columns are ``w`` wide each."""
    bar = raw.find("|")
    if bar < 4 or bar % 2 or bar + 1 >= len(raw) or raw[bar - 1] != " ":
        return None
    numbers = raw[: bar - 1]
    if not _NUMBERS.match(numbers):
        return None
    width = (bar - 2) // 2
    new_column = numbers[width + 1 :].strip()
    marker = raw[bar + 1]
    if marker not in "+- ":
        return None
    return (int(new_column) if new_column else None), marker, raw[bar + 2 :]
