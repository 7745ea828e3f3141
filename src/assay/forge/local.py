"""The local forge: a pull request is a branch of a git repository on this machine."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.config import REPO_CONFIG_FILE
from assay.diff import parse_unified_diff
from assay.forge.base import PullRequestSnapshot, RevisionReader
from assay.forge.git import GitRepo
from assay.model import PullRequestMeta

__all__ = ["GitRevisionReader", "local_identity", "local_snapshot"]


class GitRevisionReader:
    """``RevisionReader`` over one commit of a ``GitRepo`` (reads blobs; no checkout)."""

    def __init__(self, repo: GitRepo, rev: str) -> None:
        self._repo = repo
        self._rev = rev
        self._files: list[str] | None = None

    def read(self, path: str) -> bytes | None:
        return self._repo.read_blob(self._rev, path)

    def exists(self, path: str) -> bool:
        return self._repo.exists(self._rev, path)

    def list_files(self) -> Sequence[str]:
        if self._files is None:
            self._files = self._repo.list_files(self._rev)
        return self._files


_: type[RevisionReader] = GitRevisionReader


def local_snapshot(
    repo: GitRepo,
    *,
    base: str | None = None,
    head: str = "HEAD",
    pr_id: str | None = None,
) -> PullRequestSnapshot:
    """The pull request "``head`` merged into ``base``" of a local repository.

    The review covers merge-base(base, head)…head, as a forge's pull request would. ``base``
    defaults to the branch's upstream, else ``origin/HEAD``, else ``HEAD~1``.

    Raises:
        GitError / UnknownRefError: not a repository, or a ref that does not resolve.
    """
    base_ref = base or repo.default_base_ref(head)
    head_sha = repo.rev_parse(head)
    base_sha = repo.rev_parse(base_ref)
    merge_base_sha = repo.merge_base(base_sha, head_sha)
    patch = repo.diff(merge_base_sha, head_sha)
    files = parse_unified_diff(patch)
    info = repo.commit_info(head_sha)
    head_ref = _head_ref(repo, head)
    meta = PullRequestMeta(
        title=info.subject,
        author=info.author.split(" <", 1)[0],
        description=info.body,
        base_ref=base_ref,
        head_ref=head_ref,
        base_sha=base_sha,
        head_sha=head_sha,
        merge_base_sha=merge_base_sha,
    )
    config_blob = repo.read_blob(merge_base_sha, REPO_CONFIG_FILE)
    attributes_blob = repo.read_blob(merge_base_sha, ".gitattributes")
    return PullRequestSnapshot(
        meta=meta,
        identity=_identity(repo, head_ref, pr_id),
        files=files,
        patch_bytes=len(patch),
        head=GitRevisionReader(repo, head_sha),
        base=GitRevisionReader(repo, merge_base_sha),
        repo_config_text=_text(config_blob),
        gitattributes_text=_text(attributes_blob),
    )


def _text(blob: bytes | None) -> str | None:
    return blob.decode("utf-8", errors="replace") if blob is not None else None


def local_identity(repo: GitRepo, *, head: str = "HEAD", pr_id: str | None = None) -> str:
    """The identity that owns a local pull request's rounds: ``local:/repo@branch``."""
    return _identity(repo, _head_ref(repo, head), pr_id)


def _identity(repo: GitRepo, head_ref: str, pr_id: str | None) -> str:
    return pr_id or f"local:{Path(repo.path).resolve()}@{head_ref}"


def _head_ref(repo: GitRepo, head: str) -> str:
    branch = repo.current_branch() if head == "HEAD" else head
    return branch or head
