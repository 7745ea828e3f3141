"""Fixtures: a fresh scripted server per test and real openai SDK clients pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from assay.testing import ScriptedLLMServer


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as running_server:
        yield running_server


@pytest.fixture
def client(server: ScriptedLLMServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0) as sdk_client:
        yield sdk_client
