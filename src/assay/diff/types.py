"""Value types of the diff engine.

A unified diff becomes ``FileDiff`` → ``Hunk`` → ``DiffLine``::

    diff --git a/app.py b/app.py
    @@ -10,3 +10,4 @@ def run():          Hunk(old_start=10, old_count=3, new_start=10, new_count=4)
         setup()                          DiffLine(CONTEXT, old_line=10, new_line=10)
    -    go()                             DiffLine(REMOVED, old_line=11, new_line=None)
    +    go(fast=True)                    DiffLine(ADDED,   old_line=None, new_line=11)
    +    report()                         DiffLine(ADDED,   old_line=None, new_line=12)
         teardown()                       DiffLine(CONTEXT, old_line=12, new_line=13)

Lines are 1-based. ``Side.RIGHT`` is the head version of a file (added and context lines),
``Side.LEFT`` the base version (removed and context lines), as in GitHub's review API.

This package imports nothing else of Assay's.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Anchor",
    "AnchorMode",
    "DiffLine",
    "FileDiff",
    "FileStatus",
    "Hunk",
    "LineKind",
    "Side",
]


class Side(StrEnum):
    """Which version of a file a line number refers to."""

    LEFT = "LEFT"
    """The base version (removed and context lines)."""
    RIGHT = "RIGHT"
    """The head version (added and context lines)."""


class LineKind(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CONTEXT = "context"


class FileStatus(StrEnum):
    ADDED = "added"
    DELETED = "deleted"
    MODIFIED = "modified"
    RENAMED = "renamed"
    COPIED = "copied"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class DiffLine(_Frozen):
    kind: LineKind
    old_line: int | None
    """Line number in the base file; ``None`` for added lines."""
    new_line: int | None
    """Line number in the head file; ``None`` for removed lines."""
    text: str
    """The line's text without the leading ``+``/``-``/space and without the newline."""


class Hunk(_Frozen):
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str = ""
    """The text after the second ``@@`` (often the enclosing function)."""
    lines: tuple[DiffLine, ...] = ()

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"


class FileDiff(_Frozen):
    path: str
    """Path at head (for a deleted file: its path at base)."""
    old_path: str | None = None
    """Path at base when it differs (renames, copies); otherwise ``None``."""
    status: FileStatus
    is_binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    """File modes when they changed (``100644`` → ``100755``); otherwise ``None``."""
    hunks: tuple[Hunk, ...] = ()
    patch: str = ""
    """The file's section of the unified diff, as text (for the model and for size budgets)."""

    @property
    def added_lines(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind is LineKind.ADDED)

    @property
    def removed_lines(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind is LineKind.REMOVED)

    def commentable_lines(self, side: Side) -> frozenset[int]:
        """Line numbers on ``side`` that GitHub accepts a review comment on."""
        if side is Side.RIGHT:
            return frozenset(
                line.new_line
                for h in self.hunks
                for line in h.lines
                if line.new_line is not None and line.kind is not LineKind.REMOVED
            )
        return frozenset(
            line.old_line
            for h in self.hunks
            for line in h.lines
            if line.old_line is not None and line.kind is not LineKind.ADDED
        )

    def changed_lines(self) -> frozenset[int]:
        """Head line numbers of added lines."""
        return frozenset(
            line.new_line
            for h in self.hunks
            for line in h.lines
            if line.kind is LineKind.ADDED and line.new_line is not None
        )


class AnchorMode(StrEnum):
    """Where an inline comment ended up, in order of preference."""

    LINE = "line"
    """On the finding's own line (or range), which is inside a hunk."""
    NEAREST_HUNK = "nearest_hunk"
    """The line is outside every hunk of a changed file: moved to the nearest hunk line,
    with a "📍 actual location" preface."""
    FILE = "file"
    """The file is in the diff but has no commentable line (binary, mode-only, pure rename):
    a file-level comment."""
    BODY = "body"
    """The file is not in the diff at all: the finding is listed in the review body only."""


class Anchor(_Frozen):
    """Where a finding's inline comment is posted.

    ``line``/``side`` (and ``start_line``/``start_side`` for a range) are valid GitHub review
    comment coordinates when ``mode`` is ``LINE`` or ``NEAREST_HUNK``; ``None`` otherwise.
    """

    mode: AnchorMode
    path: str
    line: int | None = None
    side: Side | None = None
    start_line: int | None = None
    start_side: Side | None = None

    @property
    def moved(self) -> bool:
        return self.mode is not AnchorMode.LINE
