"""A read-only view of the reviewed repository at head (files on disk) and at base (blobs).

Example::

    with GitRepo.open(".") as repo, Workspace(repo, head=head_sha, base=base_sha) as workspace:
        toolbox = Toolbox(workspace)
        ...  # every rep of the round shares the workspace; it is written on first use

The head tree is written once, lazily, into a private temporary directory that ``close()``
deletes; the user's repository is only read. Base files are read from git directly (no second
checkout).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

import structlog

from assay.forge.git import GitRepo
from assay.tools._git_tree import MaterializeStats, TreeEntry, materialize_tree, read_tree

__all__ = ["Revision", "Workspace"]

log = structlog.get_logger(__name__)

Revision = Literal["head", "base"]


class Workspace:
    """The repository as the tools see it: head on disk, head and base trees, base blobs.

    Thread-safe: reps running their tools in worker threads share one instance. Create it per
    round and close it (or use ``with``) when the round is done.

    Args:
        repo: The repository (it must outlive the workspace).
        head: The reviewed revision (any ref; resolved to a SHA once).
        base: The revision the change is compared against, for ``git_show``; ``None`` when
            there is none.
        temp_dir: Where the checkout's private directory is created (default: the system's).

    Raises:
        UnknownRefError: ``head`` or ``base`` does not name a commit.
    """

    def __init__(
        self,
        repo: GitRepo,
        *,
        head: str,
        base: str | None = None,
        temp_dir: Path | None = None,
    ) -> None:
        self._repo = repo
        self.head_sha = repo.rev_parse(head)
        """The head commit's full SHA."""
        self.base_sha = repo.rev_parse(base) if base is not None else None
        """The base commit's full SHA, or ``None``."""
        self._temp_dir = temp_dir
        self._lock = threading.Lock()
        self._trees: dict[str, dict[str, TreeEntry]] = {}
        self._root: Path | None = None
        self._stats: MaterializeStats | None = None
        self._cleanup: weakref.finalize[[str], Workspace] | None = None
        self._closed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Delete the checkout directory (idempotent); later calls to :attr:`root` fail."""
        with self._lock:
            self._closed = True
            if self._cleanup is not None:
                self._cleanup()
            self._root = None

    @property
    def root(self) -> Path:
        """The head checkout's directory (resolved), written on first access.

        Raises:
            RuntimeError: The workspace is closed.
            GitError: The tree could not be read.
            OSError: The files could not be written.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the workspace is closed")
            if self._root is None:
                self._root = self._materialize_locked()
            return self._root

    @property
    def stats(self) -> MaterializeStats | None:
        """What writing the checkout took, or ``None`` before it is written."""
        return self._stats

    @property
    def refused_links(self) -> Mapping[str, str]:
        """Symbolic links of head pointing outside the checkout (not created): path → target."""
        _ = self.root  # the links are known once the checkout is written
        return self._stats.refused_links if self._stats is not None else {}

    def has_base(self) -> bool:
        """Whether a base revision was given."""
        return self.base_sha is not None

    def tree(self, revision: Revision = "head") -> Mapping[str, TreeEntry]:
        """Every file, symbolic link and submodule of a revision: path → entry.

        Args:
            revision: ``"head"`` or ``"base"``.

        Returns:
            The entries (read once per revision, then kept).

        Raises:
            ValueError: ``"base"`` without a base revision.
            GitError: The tree could not be read.
        """
        sha = self._sha(revision)
        with self._lock:
            if sha not in self._trees:
                self._trees[sha] = read_tree(self._repo, sha)
            return self._trees[sha]

    def read_blob(self, revision: Revision, path: str) -> bytes | None:
        """The bytes of ``path`` at a revision, from git (``None`` when not a file there).

        Args:
            revision: ``"head"`` or ``"base"``.
            path: A repository-relative path.

        Returns:
            The content, or ``None``.
        """
        return self._repo.read_blob(self._sha(revision), path)

    def _sha(self, revision: Revision) -> str:
        if revision == "head":
            return self.head_sha
        if self.base_sha is None:
            raise ValueError("this workspace has no base revision")
        return self.base_sha

    def _materialize_locked(self) -> Path:
        if self.head_sha not in self._trees:
            self._trees[self.head_sha] = read_tree(self._repo, self.head_sha)
        directory = tempfile.mkdtemp(prefix="assay-checkout-", dir=self._temp_dir)
        # Deleted when the workspace is closed or collected, whichever comes first.
        self._cleanup = weakref.finalize(self, _remove_directory, directory)
        root = Path(directory).resolve()
        try:
            self._stats = materialize_tree(self._repo, self._trees[self.head_sha], root)
        except BaseException:
            self._cleanup()
            raise
        log.info(
            "tools.checkout",
            head=self.head_sha[:12],
            files=self._stats.files,
            symlinks=self._stats.symlinks,
            refused_links=len(self._stats.refused_links),
            skipped=len(self._stats.skipped),
            bytes=self._stats.bytes_written,
            duration_ms=round(self._stats.seconds * 1000),
        )
        return root


def _remove_directory(directory: str) -> None:
    shutil.rmtree(directory, ignore_errors=True)
