"""What a forge gives a review: a snapshot of the pull request, and readers of its revisions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from assay.diff.types import FileDiff
from assay.model import PullRequestMeta

__all__ = ["PullRequestSnapshot", "RevisionReader"]


class RevisionReader(Protocol):
    """Read-only access to the files of one revision of the repository."""

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or ``None`` when it does not exist at this revision."""
        ...

    def exists(self, path: str) -> bool: ...

    def list_files(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class PullRequestSnapshot:
    """Everything a round needs to know about a pull request at one head."""

    meta: PullRequestMeta
    identity: str
    """Stable id of the pull request across rounds (``local:/repo@branch``, ``github:o/r#12``)."""
    files: tuple[FileDiff, ...]
    """The full diff merge-base…head, parsed."""
    patch_bytes: int
    head: RevisionReader
    base: RevisionReader
    repo_config_text: str | None = None
    """``.assay.toml`` at the BASE revision (``None`` when absent)."""
    gitattributes_text: str | None = None
    """``.gitattributes`` at the BASE revision (generated/vendored markers)."""
    delta_files: tuple[str, ...] = field(default=())
    """Files changed since the previously reviewed head (empty: same as ``files``)."""
