"""Helpers shared by the LLM tests (a module of its own: conftest.py is not importable)."""

from __future__ import annotations

from typing import Any

from assay.llm import LLMSettings
from assay.testing import ScriptedLLMServer


class SleepRecorder:
    """Stands in for ``asyncio.sleep`` between retries: records the delay, does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def settings_for(server: ScriptedLLMServer, **overrides: Any) -> LLMSettings:
    """Settings for the scripted server: no backoff, small budgets, short timeout."""
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "assay-test",
        "backoff_base_s": 0.0,
        "transport_retries": 2,
        "reasks": 1,
        "timeout_s": 5.0,
        "max_tokens": 2000,
    }
    values.update(overrides)
    return LLMSettings(**values)


def settings_for_url(base_url: str, **overrides: Any) -> LLMSettings:
    """Settings for any endpoint URL (e.g. a closed port), with no backoff."""
    return LLMSettings(base_url=base_url, model="assay-test", backoff_base_s=0.0, **overrides)


def chat_completion(
    content: str, *, finish_reason: str = "stop", model: str = "m"
) -> dict[str, Any]:
    """A minimal ``chat.completion`` object, as a batch output line's body carries it."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
    }
