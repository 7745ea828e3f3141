"""Parse a unified diff (``git diff`` output, or plain ``diff -u``) into ``FileDiff`` values.

A ``git diff`` is cut into one section per ``diff --git`` line (a hunk line always starts with
``+``, ``-``, space or ``\\``, so such a line can only be a file boundary). Each section's
header is read by ``_git_header``; its hunks by ``unidiff``. A diff without ``diff --git``
lines is handed to ``unidiff`` whole.

Content bytes that are not UTF-8 become U+FFFD in line text; line numbers and paths are
unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as UnidiffHunk
from unidiff.patch import PatchedFile, PatchSet

from assay.diff._git_header import (
    GitFileHeader,
    parse_git_file_header,
    strip_line_end,
    unquote_c_path,
)
from assay.diff.types import DiffLine, FileDiff, FileStatus, Hunk, LineKind
from assay.errors import DiffError

__all__ = ["parse_unified_diff"]

_GIT_FILE_START = "diff --git "
_COMBINED_STARTS = ("diff --cc ", "diff --combined ")
_LINE_KINDS = {"+": LineKind.ADDED, "-": LineKind.REMOVED, " ": LineKind.CONTEXT}
_DEV_NULL = "/dev/null"


def parse_unified_diff(diff: bytes | str) -> tuple[FileDiff, ...]:
    """Parse a unified diff into one ``FileDiff`` per file, in the diff's order.

    Handles added, deleted, modified, renamed and copied files, binary files, mode-only
    changes, missing final newlines, quoted and non-ASCII paths, and non-UTF-8 content.

    Args:
        diff: The diff as produced by ``git diff`` (bytes are decoded as UTF-8, invalid
            bytes replaced).

    Returns:
        The files; empty for an empty diff.

    Raises:
        DiffError: The text is not a unified diff, or a hunk is malformed or truncated.

    Example:
        >>> diff = b"diff --git a/x b/x\\n--- a/x\\n+++ b/x\\n@@ -1 +1 @@\\n-a\\n+b\\n"
        >>> files = parse_unified_diff(diff)
        >>> files[0].path, files[0].changed_lines()
        ('x', frozenset({1}))
    """
    text = diff.decode("utf-8", "replace") if isinstance(diff, bytes) else diff
    lines = _split_lines(text)
    if not any(line.strip() for line in lines):
        return ()
    combined = next((line for line in lines if line.startswith(_COMBINED_STARTS)), None)
    if combined is not None:
        raise DiffError(f"combined (merge) diffs are not supported: {combined.strip()[:200]}")
    starts = [index for index, line in enumerate(lines) if line.startswith(_GIT_FILE_START)]
    if not starts:
        return _parse_plain_diff(lines)
    ends = [*starts[1:], len(lines)]
    return tuple(
        _parse_git_section(lines[start:end]) for start, end in zip(starts, ends, strict=True)
    )


def _split_lines(text: str) -> list[str]:
    # Only "\n" ends a diff line: str.splitlines() would also split on "\r", "\x0b",
    # "\u2028" … inside file contents.
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _parse_git_section(section: list[str]) -> FileDiff:
    header = parse_git_file_header(section)
    hunks: tuple[Hunk, ...] = ()
    patch_end = header.end
    if header.hunks_start is not None and not header.is_binary:
        hunk_lines = section[header.hunks_start :]
        patched_files = _run_unidiff(hunk_lines, header.path)
        if len(patched_files) > 1:
            raise DiffError(f"{header.path}: a second ---/+++ file header without 'diff --git'")
        if patched_files:
            hunks = _convert_hunks(patched_files[0])
            patch_end = _patch_end(patched_files[0], section, header.hunks_start)
    return _file_diff(header, hunks, "".join(section[:patch_end]))


def _file_diff(header: GitFileHeader, hunks: tuple[Hunk, ...], patch: str) -> FileDiff:
    return FileDiff(
        path=header.path,
        old_path=header.old_path,
        status=header.status,
        is_binary=header.is_binary,
        old_mode=header.old_mode,
        new_mode=header.new_mode,
        hunks=hunks,
        patch=patch,
    )


def _run_unidiff(lines: Sequence[str], where: str) -> list[PatchedFile]:
    try:
        return list(PatchSet(lines))
    except (UnidiffParseError, ValueError, IndexError) as error:
        raise DiffError(f"malformed diff for {where}: {error}") from error


def _patch_end(patched_file: PatchedFile, lines: Sequence[str], offset: int) -> int:
    """Index in ``lines`` just past the file's last hunk line (and its no-newline marker).

    ``offset`` is the index in ``lines`` of the line unidiff numbered 1. Anything after the
    last hunk (a ``format-patch`` signature, trailing blank lines) is left out of the patch
    text given to the model.
    """
    numbered = [
        line.diff_line_no
        for hunk in patched_file
        for line in hunk
        if line.diff_line_no is not None and line.line_type in _LINE_KINDS
    ]
    if not numbered:
        return len(lines)
    end = offset + max(numbered)  # 1-based number of the last line == index just past it
    if end < len(lines) and lines[end].startswith("\\"):
        end += 1
    return end


def _convert_hunks(patched_file: PatchedFile) -> tuple[Hunk, ...]:
    return tuple(_convert_hunk(hunk) for hunk in patched_file)


def _convert_hunk(hunk: UnidiffHunk) -> Hunk:
    # "\ No newline at end of file" markers and blank separator lines are unidiff Lines
    # too; they are not lines of either file.
    lines = tuple(
        DiffLine(
            kind=_LINE_KINDS[line.line_type],
            old_line=line.source_line_no,
            new_line=line.target_line_no,
            text=strip_line_end(line.value),
        )
        for line in hunk
        if line.line_type in _LINE_KINDS
    )
    return Hunk(
        old_start=hunk.source_start,
        old_count=hunk.source_length,
        new_start=hunk.target_start,
        new_count=hunk.target_length,
        section=hunk.section_header.strip(),
        lines=lines,
    )


def _parse_plain_diff(lines: list[str]) -> tuple[FileDiff, ...]:
    patched_files = _run_unidiff(lines, "the diff")
    if not patched_files:
        first = next(line for line in lines if line.strip())
        raise DiffError(
            "not a unified diff (no 'diff --git' or ---/+++ file header); "
            f"it starts with: {first.strip()[:120]!r}"
        )
    starts = [_plain_file_start(patched_file) for patched_file in patched_files]
    ends = [*starts[1:], len(lines)]
    return tuple(
        _plain_file_diff(patched_file, lines[start:end], -start)
        for patched_file, start, end in zip(patched_files, starts, ends, strict=True)
    )


def _plain_file_start(patched_file: PatchedFile) -> int:
    # unidiff numbers the "+++" line (the "---" line is the one before) or the
    # "Binary files" line, 1-based.
    line_number = patched_file.diff_line_no or 1
    return max(line_number - (1 if patched_file.is_binary_file else 2), 0)


def _plain_file_diff(patched_file: PatchedFile, section: list[str], offset: int) -> FileDiff:
    old_name = _plain_name(patched_file.source_file)
    new_name = _plain_name(patched_file.target_file)
    # Strip git-style a/ b/ prefixes only when every name present carries its own.
    if (old_name is None or old_name.startswith("a/")) and (
        new_name is None or new_name.startswith("b/")
    ):
        old_name = old_name[2:] if old_name else None
        new_name = new_name[2:] if new_name else None
    if old_name is None and new_name is None:
        raise DiffError("a file header names /dev/null on both sides")
    if old_name is None:
        status = FileStatus.ADDED
    elif new_name is None:
        status = FileStatus.DELETED
    elif old_name != new_name:
        status = FileStatus.RENAMED
    else:
        status = FileStatus.MODIFIED
    path = new_name or old_name or ""
    hunks = _convert_hunks(patched_file)
    patch_end = _patch_end(patched_file, section, offset) if hunks else len(section)
    return FileDiff(
        path=path,
        old_path=old_name if status is FileStatus.RENAMED else None,
        status=status,
        is_binary=patched_file.is_binary_file,
        hunks=hunks,
        patch="".join(section[:patch_end]),
    )


def _plain_name(name: str | None) -> str | None:
    if not name or name == _DEV_NULL:
        return None
    if name.startswith('"'):
        return unquote_c_path(name)[0]
    return name
