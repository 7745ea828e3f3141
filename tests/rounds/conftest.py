"""Fixtures for the rounds tests: a git repository in tmp, a scripted model server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.testing import ScriptedLLMServer

from ._helpers import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    """A scripted server; each test sets ``server.reply``. A reply function that raised fails."""
    with ScriptedLLMServer() as running:
        yield running
        assert not running.errors, running.errors
