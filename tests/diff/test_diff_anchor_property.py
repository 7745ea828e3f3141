"""Property: an anchor that names a line names a line GitHub accepts a comment on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assay.diff import (
    AnchorMode,
    DiffLine,
    FileDiff,
    FileStatus,
    Hunk,
    LineKind,
    Side,
    anchor_to_diff,
    hunk_commentable_lines,
)

_KINDS_BY_STATUS = {
    FileStatus.MODIFIED: [LineKind.CONTEXT, LineKind.ADDED, LineKind.REMOVED],
    FileStatus.ADDED: [LineKind.ADDED],
    FileStatus.DELETED: [LineKind.REMOVED],
}


@st.composite
def file_diffs(draw: st.DrawFn) -> FileDiff:
    """A consistent FileDiff: hunks in order, gaps between them, numbering as git does."""
    status = draw(st.sampled_from(sorted(_KINDS_BY_STATUS)))
    kinds = st.sampled_from(_KINDS_BY_STATUS[status])
    hunk_count = 1 if status is not FileStatus.MODIFIED else draw(st.integers(0, 4))
    old_next = new_next = 1
    hunks = []
    for _ in range(hunk_count):
        gap = draw(st.integers(0, 30)) if status is FileStatus.MODIFIED else 0
        old_next, new_next = old_next + gap, new_next + gap
        old_start, new_start = old_next, new_next
        lines = []
        for kind in draw(st.lists(kinds, min_size=1, max_size=12)):
            old_line = None if kind is LineKind.ADDED else old_next
            new_line = None if kind is LineKind.REMOVED else new_next
            old_next += old_line is not None
            new_next += new_line is not None
            lines.append(DiffLine(kind=kind, old_line=old_line, new_line=new_line, text="x"))
        hunks.append(
            Hunk(
                old_start=old_start if old_next > old_start else old_start - 1,
                old_count=old_next - old_start,
                new_start=new_start if new_next > new_start else new_start - 1,
                new_count=new_next - new_start,
                lines=tuple(lines),
            )
        )
    return FileDiff(path="f.py", status=status, hunks=tuple(hunks))


@given(
    file=file_diffs(),
    line=st.integers(-3, 400),
    side=st.sampled_from(Side),
    end_offset=st.none() | st.integers(-5, 40),
)
def test_anchored_lines_are_commentable(
    file: FileDiff, line: int, side: Side, end_offset: int | None
) -> None:
    end_line = None if end_offset is None else line + end_offset
    anchor = anchor_to_diff("f.py", line, side, [file], end_line=end_line)

    has_lines = bool(file.commentable_lines(Side.LEFT) | file.commentable_lines(Side.RIGHT))
    assert (anchor.mode is AnchorMode.FILE) == (not has_lines)
    if anchor.mode not in (AnchorMode.LINE, AnchorMode.NEAREST_HUNK):
        assert (anchor.line, anchor.side, anchor.start_line) == (None, None, None)
        return
    assert anchor.side is not None and anchor.line is not None
    assert anchor.line in file.commentable_lines(anchor.side)
    if anchor.mode is AnchorMode.LINE:
        assert line == (anchor.start_line or anchor.line)
    if anchor.start_line is not None:
        assert anchor.start_side is anchor.side
        assert anchor.start_line < anchor.line
        span = set(range(anchor.start_line, anchor.line + 1))
        assert any(span <= hunk for hunk in hunk_commentable_lines(file, anchor.side))
