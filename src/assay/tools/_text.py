"""Showing file contents to the model: numbered, bounded, and saying how to read on."""

from __future__ import annotations

from dataclasses import dataclass

from assay.tools._errors import ToolError
from assay.tools._grep_engine import display_line

__all__ = ["ExcerptLimits", "bound_output", "render_excerpt"]


@dataclass(frozen=True)
class ExcerptLimits:
    """How much of a file one call shows."""

    max_lines: int
    max_bytes: int
    line_chars: int


def render_excerpt(
    label: str,
    data: bytes,
    *,
    start: int,
    end: int | None,
    limits: ExcerptLimits,
    read_on: str,
) -> str:
    """Number the lines ``start``–``end`` of a file, within the limits.

    Args:
        label: How the header names the file (``"src/app.py"``, ``"src/app.py at base"``).
        data: The file's bytes.
        start: The first line (1-based).
        end: The last line (inclusive), or ``None`` for as many as the limits allow.
        limits: Lines, bytes and characters per line.
        read_on: The call to suggest for the rest; ``{start}`` in it becomes the next line.

    Returns:
        A header line, then ``<number> | <text>`` lines, then a note when cut.

    Raises:
        ToolError: A binary file, ``start`` past the end, or ``end`` before ``start``.
    """
    if b"\0" in data:
        raise ToolError(f"{label} is a binary file ({len(data)} bytes); it is not shown")
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    total = len(lines)
    if total == 0:
        return f"{label} is empty (0 lines)."
    if end is not None and end < start:
        raise ToolError(f"end={end} is before start={start}")
    if start > total:
        raise ToolError(f"start={start} is past the end: {label} has {total} lines")
    last = min(end if end is not None else total, total)
    width = max(4, len(str(last)))
    shown: list[str] = []
    used_bytes = 0
    number = start
    while number <= last and len(shown) < limits.max_lines:
        line = f"{number:>{width}} | {display_line(lines[number - 1], limits.line_chars)}"
        size = len(line.encode("utf-8")) + 1
        if shown and used_bytes + size > limits.max_bytes:
            break
        shown.append(line)
        used_bytes += size
        number += 1
    shown_end = number - 1
    header = f"{label}, lines {start}-{shown_end} of {total}"
    if "\ufffd" in text and not _is_utf8(data):
        header += " (not valid UTF-8: undecodable bytes are shown as U+FFFD)"
    parts = [f"{header}:", *shown]
    if shown_end < last:
        hint = read_on.replace("{start}", str(shown_end + 1))
        parts.append(
            f"[cut after line {shown_end}: at most {limits.max_lines} lines or "
            f"{limits.max_bytes} bytes per call; {hint}]"
        )
    return "\n".join(parts)


def bound_output(text: str, max_chars: int) -> str:
    """Cut ``text`` to ``max_chars`` characters, saying so.

    Args:
        text: A tool's answer.
        max_chars: The limit.

    Returns:
        The text, or its start and a note.
    """
    if len(text) <= max_chars:
        return text
    note = f"\n[output cut at {max_chars} characters]"
    return text[: max(0, max_chars - len(note))] + note


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
