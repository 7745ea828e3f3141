"""The workspace: a private checkout of head, written once, never touching the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.errors import UnknownRefError
from assay.forge.git import GitRepo
from assay.tools import Workspace
from tests.tools.repo_builder import SECRET, ToolRepo, git


def _repository_state(repo: Path) -> tuple[float, list[str], str, str]:
    # The index first: `git status` itself may refresh it (unless optional locks are off).
    index_mtime = (repo / ".git" / "index").stat().st_mtime
    listing = sorted(os.listdir(repo / ".git"))
    os.environ["GIT_OPTIONAL_LOCKS"] = "0"
    status = git(repo, "status", "--porcelain", "--ignored")
    worktrees = git(repo, "worktree", "list", "--porcelain")
    return index_mtime, listing, status, worktrees


def test_checkout_is_written_lazily_once_and_deleted_on_close(
    tool_repo: ToolRepo, tmp_path: Path
) -> None:
    checkouts = tmp_path / "lazy"
    checkouts.mkdir()
    with GitRepo.open(tool_repo.path) as repo:
        workspace = Workspace(repo, head="feature", base="main", temp_dir=checkouts)
        assert workspace.stats is None
        assert list(checkouts.iterdir()) == []

        root = workspace.root
        stats = workspace.stats
        assert workspace.root == root  # reused, not written again
        assert workspace.stats is stats
        assert list(checkouts.iterdir()) == [root]

        workspace.close()
        assert not root.exists()
        with pytest.raises(RuntimeError, match="closed"):
            _ = workspace.root


def test_checkout_holds_head_byte_for_byte_without_touching_the_repository(
    tool_repo: ToolRepo, fresh_workspace: Workspace
) -> None:
    workspace = fresh_workspace
    before = _repository_state(tool_repo.path)
    root = workspace.root

    for path, entry in workspace.tree("head").items():
        if entry.kind == "file":
            expected = workspace.read_blob("head", path)
            assert (root / path).read_bytes() == expected, path
            assert not os.access(root / path, os.X_OK)
    assert _repository_state(tool_repo.path) == before
    assert workspace.head_sha == tool_repo.head
    assert workspace.base_sha == tool_repo.base


def test_export_attributes_of_the_reviewed_repository_are_not_applied(
    workspace: Workspace,
) -> None:
    # `git archive` would drop archive_ignored.py and expand $Format:…$ in subst.txt.
    assert (workspace.root / "archive_ignored.py").read_text() == "VISIBLE = 'needle'\n"
    assert (workspace.root / "subst.txt").read_text() == "$Format:%H$\n"


def test_links_that_leave_the_checkout_are_not_created(
    tool_repo: ToolRepo, workspace: Workspace
) -> None:
    root = workspace.root

    assert dict(workspace.refused_links) == {
        "escape_via_dot": "dot/../outside/secret.txt",
        "evil_abs": str(tool_repo.outside_dir / "secret.txt"),
        "evil_dir": "../outside",
        "evil_rel": "../outside/secret.txt",
    }
    for name in workspace.refused_links:
        assert not os.path.lexists(root / name)
    assert (root / "alias.py").is_symlink()
    assert (root / "src_link").resolve() == root / "src"
    assert (root / "dot").resolve() == root
    assert (root / "dangling").is_symlink()
    for directory, _subdirectories, files in os.walk(root, followlinks=False):
        for name in files:
            path = Path(directory) / name
            if not path.is_symlink():
                assert SECRET not in path.read_bytes().decode("utf-8", "replace")
            else:
                assert path.resolve().is_relative_to(root) or not path.exists()


def test_trees_of_both_revisions(fresh_workspace: Workspace) -> None:
    workspace = fresh_workspace
    head = workspace.tree("head")
    base = workspace.tree("base")

    assert "src/old.py" in base and "src/old.py" not in head
    assert head["vendor/lib"].kind == "submodule"
    assert head["evil_rel"].kind == "symlink"
    assert head["src/calc.py"].kind == "file"
    assert workspace.stats is None  # reading trees does not write the checkout


def test_unknown_revisions_are_refused(tool_repo: ToolRepo) -> None:
    with GitRepo.open(tool_repo.path) as repo:
        with pytest.raises(UnknownRefError):
            Workspace(repo, head="no-such-branch")
        workspace = Workspace(repo, head="feature")
        assert not workspace.has_base()
        with pytest.raises(ValueError, match="no base"):
            workspace.tree("base")
