"""Fixtures for the LLM layer: a scripted server on loopback and a retry-sleep recorder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_helpers import SleepRecorder

from assay.testing import ScriptedLLMServer


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    """A scripted server whose reply function each test sets (``server.reply = …``)."""
    with ScriptedLLMServer() as running:
        yield running


@pytest.fixture
def sleep() -> SleepRecorder:
    return SleepRecorder()
