"""The grep semantics, and the pure-Python engine that runs in a child process.

Standard library only: this file is also run as a script (``python -I -S _grep_engine.py``), so
a pattern that backtracks catastrophically can be stopped by killing the process. Its input is
one JSON object on stdin, its output one JSON object on stdout::

    in:  {"root": "/tmp/…", "files": ["a.py", …], "pattern": "…", "max_shown": 50,
          "line_chars": 300}
    out: {"counts": [["a.py", 3], …], "shown": [["a.py", 12, "text"], …]}

What is searched: every file given, split into lines at ``\\n`` only (a ``\\r`` stays part of
its line); a file containing a NUL byte (binary) or that is not valid UTF-8 is skipped. A line
matches when ``re.search(pattern, line)`` finds a match. ``counts`` has one entry per file with
at least one matching line; ``shown`` has the first ``max_shown`` matching lines in path order.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["decode_text_file", "display_line", "search_files"]


def decode_text_file(data: bytes) -> list[str] | None:
    """Split a file into its lines, or return ``None`` when grep skips it.

    Args:
        data: The file's bytes.

    Returns:
        The lines (without ``\\n``), or ``None`` for a binary (NUL byte) or non-UTF-8 file.
    """
    if b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def display_line(text: str, max_chars: int) -> str:
    """A line as the model sees it: without a final ``\\r``, cut at ``max_chars`` characters.

    Args:
        text: The line.
        max_chars: The most characters shown.

    Returns:
        The line, or its start and ``… [N chars]``.
    """
    if text.endswith("\r"):
        text = text[:-1]
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}… [{len(text)} chars]"


def search_files(
    root: str, files: Iterable[str], pattern: re.Pattern[str], *, max_shown: int, line_chars: int
) -> dict[str, list[Any]]:
    """Search ``files`` (relative to ``root``) line by line.

    Args:
        root: The checkout's directory.
        files: Relative paths, in the order results should come.
        pattern: The compiled pattern.
        max_shown: How many matching lines to return with their text.
        line_chars: The most characters of a shown line.

    Returns:
        ``{"counts": [[path, n], …], "shown": [[path, line, text], …]}``.
    """
    counts: list[list[Any]] = []
    shown: list[list[Any]] = []
    for path in files:
        try:
            with open(os.path.join(root, path), "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        lines = decode_text_file(data)
        if lines is None:
            continue
        matching = 0
        for number, line in enumerate(lines, start=1):
            if pattern.search(line) is None:
                continue
            matching += 1
            if len(shown) < max_shown:
                shown.append([path, number, display_line(line, line_chars)])
        if matching:
            counts.append([path, matching])
    return {"counts": counts, "shown": shown}


def main() -> None:
    """Read a request on stdin, write the result on stdout (see the module docstring)."""
    request = json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogatepass"))
    result = search_files(
        request["root"],
        request["files"],
        re.compile(request["pattern"]),
        max_shown=int(request["max_shown"]),
        line_chars=int(request["line_chars"]),
    )
    sys.stdout.buffer.write(json.dumps(result, ensure_ascii=True).encode("ascii"))


if __name__ == "__main__":
    main()
