"""Helpers for the agent tests: settings, a reply model, raw completions for the cache."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from assay.llm import LLMSettings, Message
from assay.testing import ScriptedLLMServer


class Verdict(BaseModel):
    """The reply the tests' agentic stage asks for."""

    verdict: Literal["confirmed", "refuted"]
    reason: str


VERDICT = {"verdict": "confirmed", "reason": "summ is not defined anywhere"}

MESSAGES: list[Message] = [
    {"role": "system", "content": "You verify findings. Use the tools, then answer in JSON."},
    {"role": "user", "content": "Finding: src/calc.py:6 calls summ(), which is undefined."},
]


def settings_for(server: ScriptedLLMServer | None, **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {
        # Port 9 (discard) on loopback: nothing listens, for batch runs that must not call out.
        "base_url": server.base_url if server is not None else "http://127.0.0.1:9/v1",
        "model": "assay-test",
        "backoff_base_s": 0.0,
        "transport_retries": 0,
        "reasks": 1,
        "timeout_s": 10.0,
        "max_tokens": 1000,
    }
    values.update(overrides)
    return LLMSettings(**values)


def completion(message: dict[str, Any], *, finish_reason: str = "stop") -> dict[str, Any]:
    """A ``chat.completion`` object as a batch output file carries it."""
    return {
        "id": "chatcmpl-batch",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": "assay-test",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, **message},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
    }


def tool_call_message(name: str, arguments: str, call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return {"tool_calls": [call]}
