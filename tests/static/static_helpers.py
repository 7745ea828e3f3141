"""Test helpers for the static stage: a head revision held in memory."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

from assay.static import ChangedPythonFile


class MemoryRevision:
    """A ``RevisionReader`` over a dict of files: the head revision of a repository in a test."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def write(self, path: str, text: str | bytes) -> MemoryRevision:
        """Add a file; text is dedented, so tests can indent file bodies."""
        self.files[path] = text if isinstance(text, bytes) else textwrap.dedent(text).encode()
        return self

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)

    def exists(self, path: str) -> bool:
        return path in self.files

    def list_files(self) -> Sequence[str]:
        return sorted(self.files)

    def changed(self, path: str, lines: Iterable[int] | None = None) -> ChangedPythonFile:
        """The file as a changed file: ``lines`` added, or every line when ``None``."""
        content = self.files[path]
        if lines is None:
            lines = range(1, content.count(b"\n") + 2)
        return ChangedPythonFile(path=path, content=content, changed_lines=frozenset(lines))
