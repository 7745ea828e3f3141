"""The ``grep`` tool: validate what the model asked, search, and word the answer."""

from __future__ import annotations

import re
from pathlib import Path

import structlog

from assay.tools._errors import ToolError
from assay.tools._grep import GrepHits, GrepQuery, run_grep
from assay.tools._paths import compile_glob
from assay.tools.definitions import ToolLimits

__all__ = ["grep_tool"]

log = structlog.get_logger(__name__)


def grep_tool(
    root: Path,
    *,
    pattern: str,
    path_glob: str | None,
    fixed: bool,
    max_results: int | None,
    limits: ToolLimits,
    ripgrep: Path | None,
) -> str:
    """Search the checkout and describe the result for the model.

    Args:
        root: The checkout's directory.
        pattern: A regular expression, or a plain string when ``fixed``.
        path_glob: Restricts the files searched, or ``None``.
        fixed: Search for ``pattern`` literally.
        max_results: Matching lines to show (default and cap from ``limits``).
        limits: The tool limits.
        ripgrep: The ``rg`` binary, or ``None``.

    Returns:
        A summary line, the first matching lines (``path:line: text``), and the count of
        matching lines per file.

    Raises:
        ToolError: An invalid pattern or glob, or a search that timed out.
    """
    regex = re.escape(pattern) if fixed else pattern
    _check_pattern(regex, pattern)
    glob = compile_glob(path_glob) if path_glob is not None else None
    shown_limit = min(max_results or limits.grep_default_results, limits.grep_max_results)
    query = GrepQuery(
        pattern=regex,
        glob=glob,
        max_shown=shown_limit,
        line_chars=limits.grep_line_chars,
        timeout_s=limits.grep_timeout_s,
    )
    hits = run_grep(root, query, ripgrep)
    log.debug("tools.grep", engine=hits.engine, files=len(hits.counts))
    return _answer(pattern, path_glob, fixed, hits, limits)


def _check_pattern(regex: str, pattern: str) -> None:
    ambiguous = _ambiguous_set(regex)
    if ambiguous:
        raise ToolError(
            f"the pattern {pattern!r} has {ambiguous} inside [...], which Python's re reads "
            "ambiguously; escape the character with a backslash"
        )
    try:
        re.compile(regex)
    except (re.error, RecursionError, OverflowError) as error:
        raise ToolError(f"invalid regular expression {pattern!r}: {error}") from error


def _ambiguous_set(pattern: str) -> str | None:
    """What would make ``re.compile`` warn (FutureWarning) about set syntax, if anything."""
    index = 0
    while index < len(pattern):
        character = pattern[index]
        if character == "\\":
            index += 2
            continue
        if character != "[":
            index += 1
            continue
        index += 1
        if pattern.startswith("[", index):
            return "'[['"
        if pattern.startswith("^", index):
            index += 1
        first = True
        while index < len(pattern):
            member = pattern[index]
            if member == "\\":
                index += 2
                first = False
                continue
            if member == "]" and not first:
                break
            if not first and member in "-&~|" and pattern.startswith(member, index + 1):
                return f"a doubled {member!r}"
            first = False
            index += 1
        index += 1
    return None


def _answer(
    pattern: str, path_glob: str | None, fixed: bool, hits: GrepHits, limits: ToolLimits
) -> str:
    subject = f"{'the string' if fixed else 'the pattern'} {pattern!r}"
    if path_glob is not None:
        subject += f" in files matching {path_glob!r}"
    total = sum(count for _path, count in hits.counts)
    if total == 0:
        return f"No matches for {subject}."
    header = (
        f"{_plural(total, 'matching line')} in {_plural(len(hits.counts), 'file')} for {subject}"
    )
    if len(hits.shown) < total:
        header += (
            f"; the first {len(hits.shown)} are shown (raise max_results, at most "
            f"{limits.grep_max_results}, or narrow the search for the rest)"
        )
    lines = [f"{header}:"]
    lines.extend(f"{path}:{number}: {text}" for path, number, text in hits.shown)
    lines.append("Matching lines per file:")
    listed = hits.counts[: limits.grep_files_listed]
    lines.extend(f"{path}: {count}" for path, count in listed)
    if len(hits.counts) > len(listed):
        lines.append(f"… and {len(hits.counts) - len(listed)} more files")
    return "\n".join(lines)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
