"""Builders for real git repositories in temporary directories (used by ``conftest.py``).

The module has a unique name because ``tests/conftest.py`` already owns ``conftest``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

__all__ = ["RepoBuilder", "use_hermetic_git"]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Author",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Carl Committer",
    "GIT_COMMITTER_EMAIL": "carl@example.com",
}


class RepoBuilder:
    """Builds a repository's history file by file and commit by commit."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *arguments: str) -> str:
        result = subprocess.run(
            ["git", "-c", "init.defaultBranch=main", *arguments],
            cwd=self.path,
            capture_output=True,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"git {arguments} failed: {result.stderr.decode()}")
        return result.stdout.decode("utf-8").strip()

    def write(self, relative: str, content: str | bytes, *, executable: bool = False) -> None:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        target.chmod(0o755 if executable else 0o644)

    def remove(self, relative: str) -> None:
        self.git("rm", "-q", "--", relative)

    def move(self, old: str, new: str) -> None:
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", "--", old, new)

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def use_hermetic_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No user or system git configuration, a fixed identity, nothing pointing elsewhere."""
    home.mkdir(exist_ok=True)
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # Never discover a repository above the temporary directories.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(home.parent))
    for name, value in _IDENTITY.items():
        monkeypatch.setenv(name, value)
