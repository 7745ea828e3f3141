"""Where a line of an older head is at a newer head, read from the diff between the two.

A pull request is reviewed once per head. A finding raised at an earlier head names a line of
that head; after a push the same code may sit lower (lines inserted above it), in a renamed
file, or be gone. ``LineMap`` answers "where is line 12 of ``app/db.py`` now?" from the parsed
diff old head → new head (``git diff <old> <new>``, which works whether or not the old head is
an ancestor of the new one, so a force-push is handled like any other push)::

    @@ -10,3 +10,4 @@              line 9 of the old head      → line 9 (before every hunk)
         setup()                   line 10                     → line 10 (context)
    -    go()                      line 11                     → None (removed or changed)
    +    go(fast=True)
    +    report()
         teardown()                line 12                     → line 13 (context, shifted)
                                   line 40                     → line 41 (after the hunk)

A line maps to a line of the new head only when the diff keeps it as it was (a context line or a
line outside every hunk), so a mapped line always has the same text at both heads. Files the diff
does not mention keep their paths and lines. A deleted file maps nothing; a renamed file maps to
its new path. Only the old-head (RIGHT side) numbering of a file is mapped.

This module is pure and imports nothing of Assay's but ``assay.diff.types``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from assay.diff.types import FileDiff, FileStatus, Hunk, LineKind

__all__ = ["FileLineMap", "LineMap", "MappedLine", "build_line_map"]


@dataclass(frozen=True)
class MappedLine:
    """A line of the new head: its file (after renames) and its 1-based number."""

    path: str
    line: int


class FileLineMap:
    """How the lines of one file of the old head land in the new head.

    Args:
        old_path: The file's path at the old head.
        new_path: Its path at the new head; ``None`` when the diff deletes it.
        hunks: The diff's hunks for the file (old head → new head), in order.
        opaque: The content changed but its lines cannot be followed (a binary file): no line
            maps.
    """

    def __init__(
        self,
        old_path: str,
        new_path: str | None,
        hunks: Sequence[Hunk] = (),
        *,
        opaque: bool = False,
    ) -> None:
        self.old_path = old_path
        self.new_path = new_path
        self.hunks = tuple(sorted(hunks, key=lambda hunk: hunk.old_start))
        self.opaque = opaque
        self._kept: dict[int, int] = {}
        """Old line → new line, for the context lines inside hunks."""
        self._inside: set[int] = set()
        """Old lines inside a hunk (context or removed)."""
        self._added: frozenset[int] = frozenset(
            line.new_line
            for hunk in self.hunks
            for line in hunk.lines
            if line.kind is LineKind.ADDED and line.new_line is not None
        )
        for hunk in self.hunks:
            for line in hunk.lines:
                if line.old_line is None:
                    continue
                self._inside.add(line.old_line)
                if line.kind is LineKind.CONTEXT and line.new_line is not None:
                    self._kept[line.old_line] = line.new_line
        # Hunk boundaries for lines outside every hunk: the shift (new - old) after each hunk.
        self._ends: list[int] = []
        self._shifts: list[int] = []
        shift = 0
        for hunk in self.hunks:
            shift += hunk.new_count - hunk.old_count
            # A pure insertion (old_count 0) sits after line old_start; others span their range.
            self._ends.append(hunk.old_start + max(hunk.old_count, 1) - 1)
            self._shifts.append(shift)

    @property
    def deleted(self) -> bool:
        return self.new_path is None

    def map_line(self, line: int) -> int | None:
        """The new-head line holding old line ``line`` unchanged, or ``None``.

        Args:
            line: A 1-based line number of the file at the old head.

        Returns:
            The 1-based line number at the new head; ``None`` when the line was removed or
            changed, the file deleted, or its content cannot be followed (binary).
        """
        if self.new_path is None or self.opaque or line < 1:
            return None
        if line in self._inside:
            return self._kept.get(line)
        return line + self._shift_before(line)

    def nearest_line(self, line: int) -> int | None:
        """Where old line ``line`` is now, or where it was when the diff removed or changed it.

        A removed or changed line maps to the first line the diff put in its place (the first
        added line of its run), else to the next kept line, else to the line before.

        Args:
            line: A 1-based line number of the file at the old head.

        Returns:
            A 1-based line number at the new head; ``None`` only for a deleted or opaque file.
        """
        if self.new_path is None or self.opaque:
            return None
        line = max(line, 1)
        mapped = self.map_line(line)
        if mapped is not None:
            return mapped
        for hunk in self.hunks:
            found = _replacement_in_hunk(hunk, line)
            if found is not None:
                return found
        return max(line + self._shift_before(line), 1)

    def added_lines(self) -> frozenset[int]:
        """New-head line numbers the diff added (new or changed lines)."""
        return self._added

    def _shift_before(self, line: int) -> int:
        """The line-count change of every hunk that ends before ``line``."""
        index = bisect_right(self._ends, line - 1)
        # A pure insertion after line L (old_start = L, old_count = 0) shifts L + 1 onward,
        # but not L itself: its recorded end is L, which bisect counts only for lines > L.
        return self._shifts[index - 1] if index else 0


def _replacement_in_hunk(hunk: Hunk, line: int) -> int | None:
    """For a removed old ``line`` inside ``hunk``: the new line now in its place."""
    lines = hunk.lines
    for index, diff_line in enumerate(lines):
        if diff_line.old_line != line or diff_line.kind is not LineKind.REMOVED:
            continue
        # The run of changes this removal belongs to ends at the next context line; its first
        # added line is the replacement. Without one, the next kept line, else the previous.
        for later in lines[index + 1 :]:
            if later.kind is LineKind.CONTEXT:
                return later.new_line
            if later.kind is LineKind.ADDED:
                return later.new_line
        for earlier in reversed(lines[:index]):
            if earlier.new_line is not None:
                return earlier.new_line
        return max(hunk.new_start, 1)
    return None


class LineMap:
    """Line mapping for a whole diff old head → new head, by old path.

    Build it with :func:`build_line_map`.
    """

    def __init__(self, files: Iterable[FileLineMap], diff: Sequence[FileDiff] = ()) -> None:
        self._by_old_path = {file.old_path: file for file in files}
        self._diff = tuple(diff)
        self._diff_by_old_path = {
            (file.old_path or file.path): file
            for file in self._diff
            if file.status is not FileStatus.COPIED and file.status is not FileStatus.ADDED
        }
        self._added_by_new_path: dict[str, frozenset[int]] = {}
        for file in self._diff:
            if file.status is FileStatus.DELETED:
                continue
            if file.status is FileStatus.ADDED or file.status is FileStatus.COPIED:
                self._added_by_new_path[file.path] = file.changed_lines()
        for file_map in self._by_old_path.values():
            if file_map.new_path is not None:
                self._added_by_new_path[file_map.new_path] = file_map.added_lines()

    def file(self, old_path: str) -> FileLineMap:
        """The map of one file; a file the diff does not touch maps every line to itself."""
        found = self._by_old_path.get(old_path)
        return found if found is not None else FileLineMap(old_path, old_path)

    def file_diff(self, old_path: str) -> FileDiff | None:
        """The diff's entry for the file at ``old_path`` (``None`` when it did not change)."""
        return self._diff_by_old_path.get(old_path)

    def path_at_new(self, old_path: str) -> str | None:
        """The file's path at the new head (renames followed); ``None`` when it was deleted."""
        return self.file(old_path).new_path

    def map_line(self, old_path: str, line: int) -> MappedLine | None:
        """Where old line ``line`` of ``old_path`` is, unchanged, at the new head.

        Returns:
            The new path and line; ``None`` when the line was removed or changed or the file
            deleted.
        """
        file = self.file(old_path)
        mapped = file.map_line(line)
        if mapped is None or file.new_path is None:
            return None
        return MappedLine(file.new_path, mapped)

    def nearest(self, old_path: str, line: int) -> MappedLine | None:
        """Like :meth:`map_line`, but a removed or changed line gives where it was replaced.

        Returns:
            The new path and an approximate line; ``None`` only when the file was deleted (or
            is binary and changed).
        """
        file = self.file(old_path)
        mapped = file.nearest_line(line)
        if mapped is None or file.new_path is None:
            return None
        return MappedLine(file.new_path, mapped)

    def range_unchanged(self, old_path: str, start: int, end: int | None = None) -> bool:
        """Whether old lines ``start``…``end`` are all at the new head, unchanged and adjacent.

        Adjacent: nothing was inserted between them, so the range reads exactly as it did.

        Args:
            old_path: The file at the old head.
            start: First line (1-based).
            end: Last line, inclusive; ``None`` for ``start`` alone.
        """
        last = start if end is None or end < start else end
        mapped = [self.map_line(old_path, line) for line in range(start, last + 1)]
        if any(line is None for line in mapped):
            return False
        numbers = [line.line for line in mapped if line is not None]
        return all(after == before + 1 for before, after in pairwise(numbers))

    def added_lines(self, new_path: str) -> frozenset[int]:
        """New-head lines of ``new_path`` that the diff added or changed."""
        return self._added_by_new_path.get(new_path, frozenset())


def build_line_map(files: Sequence[FileDiff]) -> LineMap:
    """Build the line map of a parsed diff old head → new head.

    Args:
        files: ``parse_unified_diff(git diff <old head> <new head>)``; rename detection on
            (``GitRepo.diff`` passes ``-M``).

    Returns:
        The map. Copies leave their source file in place (only the copy is new).

    Example:
        >>> from assay.diff import parse_unified_diff
        >>> diff = "diff --git a/x b/x\\n--- a/x\\n+++ b/x\\n@@ -0,0 +1 @@\\n+new\\n"
        >>> build_line_map(parse_unified_diff(diff)).map_line("x", 1).line
        2
    """
    file_maps = []
    for file in files:
        if file.status is FileStatus.ADDED or file.status is FileStatus.COPIED:
            continue
        old_path = file.old_path or file.path
        if file.status is FileStatus.DELETED:
            file_maps.append(FileLineMap(old_path, None))
            continue
        file_maps.append(FileLineMap(old_path, file.path, file.hunks, opaque=file.is_binary))
    return LineMap(file_maps, files)
