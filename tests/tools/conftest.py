"""A real repository, its workspace, and toolboxes with and without ripgrep.

The repository and its workspace are built once per test module: the tools only read them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.forge.git import GitRepo
from assay.tools import Toolbox, Workspace, find_ripgrep
from tests.tools.repo_builder import ToolRepo, build_tool_repo


@pytest.fixture(scope="module")
def tool_repo(tmp_path_factory: pytest.TempPathFactory) -> ToolRepo:
    return build_tool_repo(tmp_path_factory.mktemp("tool-repo"))


@pytest.fixture(scope="module")
def workspace(tool_repo: ToolRepo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    checkouts = tmp_path_factory.mktemp("checkouts")
    with (
        GitRepo.open(tool_repo.path) as repo,
        Workspace(repo, head="feature", base="main", temp_dir=checkouts) as opened,
    ):
        yield opened


@pytest.fixture
def fresh_workspace(tool_repo: ToolRepo, tmp_path: Path) -> Iterator[Workspace]:
    """A workspace of its own, for a test that changes the checkout."""
    with (
        GitRepo.open(tool_repo.path) as repo,
        Workspace(repo, head="feature", base="main", temp_dir=tmp_path) as opened,
    ):
        yield opened


@pytest.fixture
def toolbox(workspace: Workspace) -> Toolbox:
    """Ripgrep when installed (the CI installs it), else the Python engine."""
    return Toolbox(workspace)


@pytest.fixture
def python_toolbox(workspace: Workspace) -> Toolbox:
    return Toolbox(workspace, ripgrep=None)


@pytest.fixture
def ripgrep() -> Path:
    found = find_ripgrep()
    if found is None:
        pytest.skip("ripgrep is not installed")
    return found
