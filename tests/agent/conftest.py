"""A scripted model server, a real repository and its toolbox for the agent loop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.forge.git import GitRepo
from assay.testing import ScriptedLLMServer
from assay.tools import Toolbox, Workspace
from tests.tools.repo_builder import ToolRepo, build_tool_repo


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as running:
        yield running
        assert not running.errors, running.errors


@pytest.fixture(scope="module")
def agent_repo(tmp_path_factory: pytest.TempPathFactory) -> ToolRepo:
    return build_tool_repo(tmp_path_factory.mktemp("agent-repo"))


@pytest.fixture(scope="module")
def git_repo(agent_repo: ToolRepo) -> Iterator[GitRepo]:
    with GitRepo.open(agent_repo.path) as repo:
        yield repo


@pytest.fixture(scope="module")
def workspace(git_repo: GitRepo) -> Iterator[Workspace]:
    with Workspace(git_repo, head="feature", base="main") as opened:
        yield opened


@pytest.fixture
def toolbox(workspace: Workspace) -> Toolbox:
    return Toolbox(workspace)
