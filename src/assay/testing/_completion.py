"""Pure builders for the JSON bodies the server sends, in the shapes of the OpenAI API."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assay.testing._http import error_body
from assay.testing._reply import Fault, Reply, to_json_text
from assay.testing._request import ChatRequest, message_text

__all__ = [
    "completion_body",
    "estimate_completion_tokens",
    "estimate_tokens",
    "models_body",
    "normalize_reply",
    "status_error_body",
]


def normalize_reply(value: object) -> Reply | Fault:
    """Turn whatever a reply function returned into a Reply or a Fault.

    Args:
        value: A Reply, a Fault, a ``str`` (the content), or a dict, list or pydantic model
            (serialized to JSON as the content).

    Returns:
        The Reply or Fault.

    Raises:
        TypeError: For any other value (``None`` included), so a script mistake is loud.
    """
    if isinstance(value, Reply | Fault):
        return value
    if isinstance(value, str):
        return Reply(content=value)
    if isinstance(value, dict | list) or callable(getattr(value, "model_dump_json", None)):
        return Reply(content=to_json_text(value))
    raise TypeError(
        "a reply function returns a Reply, Fault, str, dict, list or pydantic model, "
        f"not {type(value).__name__}"
    )


def estimate_tokens(text: str) -> int:
    """Estimate a token count the way the server does: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def completion_body(
    reply: Reply,
    request: ChatRequest,
    *,
    completion_id: str,
    created: int,
    default_model: str,
) -> dict[str, Any]:
    """Build a ``chat.completion`` object for one reply.

    Args:
        reply: What to answer.
        request: The request answered; its model is echoed and its text sizes the prompt.
        completion_id: The ``id`` field; tool calls without an id are numbered after it.
        created: The ``created`` Unix time.
        default_model: The model reported when the request names none.

    Returns:
        The JSON-ready body.
    """
    tool_calls = [
        {
            "id": call.id or f"call_{completion_id.removeprefix('chatcmpl-')}_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for index, call in enumerate(reply.tool_calls or ())
    ]
    prompt_tokens = (
        reply.prompt_tokens if reply.prompt_tokens is not None else _estimate_prompt(request)
    )
    completion_tokens = estimate_completion_tokens(reply)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": request.model or default_model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": reply.content,
                    "refusal": None,
                    "tool_calls": tool_calls or None,
                },
                "logprobs": None,
                "finish_reason": reply.resolved_finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        },
    }


def estimate_completion_tokens(reply: Reply) -> int:
    """Return the reply's completion tokens: as given, else estimated from its text."""
    if reply.completion_tokens is not None:
        return reply.completion_tokens
    text = (reply.content or "") + "".join(
        call.name + call.arguments for call in reply.tool_calls or ()
    )
    return estimate_tokens(text)


def status_error_body(status_code: int, message: str) -> dict[str, Any]:
    """Build the error body OpenAI sends with ``status_code``."""
    if status_code == 429:
        return error_body(message, "rate_limit_error", "rate_limit_exceeded")
    if status_code >= 500:
        return error_body(message, "server_error", None)
    return error_body(message, "invalid_request_error", None)


def models_body(models: Sequence[str]) -> dict[str, Any]:
    """Build the ``GET /v1/models`` list."""
    return {
        "object": "list",
        "data": [
            {"id": model, "object": "model", "created": 0, "owned_by": "assay-testing"}
            for model in models
        ],
    }


def _estimate_prompt(request: ChatRequest) -> int:
    # Message text plus tool calls sent back in the history: what a tokenizer would mostly
    # count. Role markers and tool schemas are left out; usage is an estimate anyway.
    characters = 0
    for message in request.messages:
        characters += len(message_text(message.get("content")))
        tool_calls = message.get("tool_calls")
        if isinstance(tool_calls, list):
            characters += sum(len(json.dumps(call)) for call in tool_calls)
    return (characters + 3) // 4
