"""Fixtures for the static stage."""

from __future__ import annotations

import pytest
from static_helpers import MemoryRevision


@pytest.fixture
def repo() -> MemoryRevision:
    """An empty head revision; tests add files with ``repo.write``."""
    return MemoryRevision()
