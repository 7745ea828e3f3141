"""Place a finding's location on the diff, where a review comment can be posted.

GitHub accepts an inline comment only on a line inside a hunk (added or context lines on the
RIGHT, removed or context lines on the LEFT). A finding elsewhere is moved, in order of
preference: to the nearest hunk line of the same file, to a file-level comment, to the review
body. ``anchor_to_diff`` decides which, and is pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.diff.types import Anchor, AnchorMode, FileDiff, FileStatus, LineKind, Side

__all__ = ["anchor_to_diff", "file_for_path", "hunk_commentable_lines"]


def _other(side: Side) -> Side:
    return Side.LEFT if side is Side.RIGHT else Side.RIGHT


def _normalize_path(path: str) -> str:
    # Models sometimes write "./src/x.py" or "/src/x.py" for the repository path.
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def file_for_path(files: Sequence[FileDiff], path: str) -> FileDiff | None:
    """The file of the diff that ``path`` names.

    ``path`` may be a file's head path, or the base path of a renamed file.

    Args:
        files: The parsed diff.
        path: A repository-relative path (a leading ``./`` or ``/`` is ignored).

    Returns:
        The matching file, or ``None`` when the file is not in the diff.
    """
    wanted = _normalize_path(path)
    for file in files:
        if file.path == wanted:
            return file
    for file in files:
        if file.status is FileStatus.RENAMED and file.old_path == wanted:
            return file
    return None


def hunk_commentable_lines(file: FileDiff, side: Side) -> tuple[frozenset[int], ...]:
    """For each hunk of ``file``, the line numbers on ``side`` that accept a comment."""
    excluded = LineKind.REMOVED if side is Side.RIGHT else LineKind.ADDED
    return tuple(
        frozenset(
            number
            for line in hunk.lines
            if line.kind is not excluded
            and (number := line.new_line if side is Side.RIGHT else line.old_line) is not None
        )
        for hunk in file.hunks
    )


def _range_in_one_hunk(file: FileDiff, start: int, end: int, side: Side) -> bool:
    for lines in hunk_commentable_lines(file, side):
        # all() stops at the first gap, so a huge bogus range costs at most one pass.
        if all(number in lines for number in range(start, end + 1)):
            return True
    return False


def _exact_side(file: FileDiff, line: int, side: Side) -> Side | None:
    """The side on which ``line`` is commentable as asked, if any.

    A side that cannot exist for the file (RIGHT of a deleted file, LEFT of an added one)
    is read as the other side: the finding can only mean that version.
    """
    if line in file.commentable_lines(side):
        return side
    side_missing = (side is Side.RIGHT and file.status is FileStatus.DELETED) or (
        side is Side.LEFT and file.status is FileStatus.ADDED
    )
    if side_missing and line in file.commentable_lines(_other(side)):
        return _other(side)
    return None


def anchor_to_diff(
    path: str,
    line: int,
    side: Side,
    files: Sequence[FileDiff],
    *,
    end_line: int | None = None,
) -> Anchor:
    """Decide where the inline comment for a finding at ``path:line`` goes.

    Args:
        path: The finding's file (head path, or the base path of a renamed file).
        line: The finding's 1-based line on ``side``.
        side: ``RIGHT`` for the head version, ``LEFT`` for the base version.
        files: The parsed diff.
        end_line: Last line of a multi-line finding (inclusive), if any.

    Returns:
        ``LINE`` at ``line`` (a range ``line..end_line`` when it lies in one hunk);
        ``NEAREST_HUNK`` at the closest commentable line of the same file (ties go to the
        earlier line; the other side when this one has none); ``FILE`` when the file has no
        commentable line (binary, mode-only, pure rename); ``BODY`` when the file is not in
        the diff.

    Example:
        >>> anchor_to_diff("app.py", 99, Side.RIGHT, files)  # doctest: +SKIP
        Anchor(mode=<AnchorMode.NEAREST_HUNK: 'nearest_hunk'>, path='app.py', line=13, ...)
    """
    file = file_for_path(files, path)
    if file is None:
        return Anchor(mode=AnchorMode.BODY, path=path)
    if not file.commentable_lines(Side.RIGHT) and not file.commentable_lines(Side.LEFT):
        return Anchor(mode=AnchorMode.FILE, path=file.path)

    exact_side = _exact_side(file, line, side)
    if exact_side is not None:
        if end_line is not None and end_line > line:
            if _range_in_one_hunk(file, line, end_line, exact_side):
                return Anchor(
                    mode=AnchorMode.LINE,
                    path=file.path,
                    start_line=line,
                    start_side=exact_side,
                    line=end_line,
                    side=exact_side,
                )
        return Anchor(mode=AnchorMode.LINE, path=file.path, line=line, side=exact_side)

    nearest_side = side if file.commentable_lines(side) else _other(side)
    candidates = file.commentable_lines(nearest_side)
    nearest = min(candidates, key=lambda number: (abs(number - line), number))
    return Anchor(mode=AnchorMode.NEAREST_HUNK, path=file.path, line=nearest, side=nearest_side)
