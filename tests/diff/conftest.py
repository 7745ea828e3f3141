"""Real git repositories in temporary directories, with a hermetic git environment."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from diff_repo_builder import RepoBuilder, use_hermetic_git

from assay.forge.git import GitRepo


@pytest.fixture
def hermetic_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_hermetic_git(monkeypatch, tmp_path / "home")


@pytest.fixture
def make_repo(hermetic_git: None, tmp_path: Path) -> Callable[..., RepoBuilder]:
    """``make_repo(name="repo", bare=False)`` creates a repository under ``tmp_path``."""

    def make(name: str = "repo", *, bare: bool = False) -> RepoBuilder:
        path = tmp_path / name
        path.mkdir()
        builder = RepoBuilder(path)
        builder.git("init", "-q", *(["--bare"] if bare else []))
        return builder

    return make


@pytest.fixture
def builder(make_repo: Callable[..., RepoBuilder]) -> RepoBuilder:
    return make_repo()


@pytest.fixture
def open_repo() -> Iterator[Callable[[Path | str], GitRepo]]:
    """Opens ``GitRepo`` values and closes them after the test."""
    opened: list[GitRepo] = []

    def open_one(path: Path | str) -> GitRepo:
        repo = GitRepo.open(path)
        opened.append(repo)
        return repo

    yield open_one
    for repo in opened:
        repo.close()
