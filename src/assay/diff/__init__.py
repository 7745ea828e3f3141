"""The diff engine: unified diffs to files, hunks and lines, and findings to anchors.

This package imports nothing else of Assay's except ``assay.errors`` (for ``DiffError``).
"""

from __future__ import annotations

from assay.diff.anchor import anchor_to_diff, file_for_path, hunk_commentable_lines
from assay.diff.parse import parse_unified_diff
from assay.diff.types import (
    Anchor,
    AnchorMode,
    DiffLine,
    FileDiff,
    FileStatus,
    Hunk,
    LineKind,
    Side,
)

__all__ = [
    "Anchor",
    "AnchorMode",
    "DiffLine",
    "FileDiff",
    "FileStatus",
    "Hunk",
    "LineKind",
    "Side",
    "anchor_to_diff",
    "file_for_path",
    "hunk_commentable_lines",
    "parse_unified_diff",
]
