"""Reading a ``chat.completion`` answer, and wording a re-ask when its content is unusable.

Only the fields Assay uses are checked (``choices[0].message``, ``finish_reason``, ``usage``),
leniently, so any OpenAI-compatible server's extras pass through; the raw JSON is what the cache
keeps.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.llm._transport import MalformedResponse

__all__ = [
    "CompletionView",
    "extract_json_text",
    "parse_completion_body",
    "summarize_validation_error",
    "view_completion",
]

_MAX_ERRORS_QUOTED = 8


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class _PromptTokensDetails(_Lenient):
    cached_tokens: int | None = None


class _Usage(_Lenient):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _PromptTokensDetails | None = None
    prompt_cache_hit_tokens: int | None = None
    """DeepSeek's name for cached prompt tokens."""


class _Message(_Lenient):
    role: str = "assistant"
    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


class _Choice(_Lenient):
    message: _Message
    finish_reason: str | None = None


class _ChatCompletion(_Lenient):
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


@dataclass(frozen=True)
class CompletionView:
    """The parts of a ``chat.completion`` that Assay reads."""

    message: dict[str, Any]
    """``choices[0].message`` as sent (role, content, tool_calls, extras)."""
    content: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int


def parse_completion_body(text: str) -> dict[str, Any]:
    """Parse an HTTP body into a chat-completion object, or raise ``MalformedResponse``.

    Args:
        text: The response body.

    Returns:
        The JSON object, known to have at least one choice with a message.

    Raises:
        MalformedResponse: Not JSON, or not shaped like a chat completion.
    """
    try:
        parsed = json.loads(text)
    except ValueError as error:
        raise MalformedResponse(f"not JSON: {error}", text) from error
    if not isinstance(parsed, dict):
        raise MalformedResponse("not a JSON object", text)
    view_completion(parsed, body_text=text)
    return parsed


def view_completion(response: dict[str, Any], *, body_text: str = "") -> CompletionView:
    """Read the first choice and the usage of a chat-completion object.

    Args:
        response: The ``chat.completion`` JSON object.
        body_text: The raw text, quoted in the error when the object is malformed.

    Returns:
        The view.

    Raises:
        MalformedResponse: No choices, or a choice without a message.
    """
    try:
        completion = _ChatCompletion.model_validate(response)
    except ValidationError as error:
        reason = f"not a chat completion: {summarize_validation_error(error)}"
        raise MalformedResponse(reason, body_text or json.dumps(response)[:2000]) from error
    choice = completion.choices[0]
    usage = completion.usage or _Usage()
    cached = usage.prompt_cache_hit_tokens or 0
    if usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens:
        cached = usage.prompt_tokens_details.cached_tokens
    raw_choice = response["choices"][0]
    return CompletionView(
        message=dict(raw_choice["message"]),
        content=choice.message.content,
        finish_reason=choice.finish_reason,
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        cached_prompt_tokens=cached,
    )


_THINK_BLOCK = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)
_FENCED = re.compile(r"\A\s*```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```\s*\Z", re.DOTALL)


def extract_json_text(content: str) -> str:
    """Return the JSON text of a reply: without a leading ``<think>`` block or a code fence.

    Reasoning models served by vLLM or llama.cpp may put their thoughts first, and models
    asked for JSON often fence it. Both are layout, not content; nothing else is altered.

    Args:
        content: The message content.

    Returns:
        The text to validate.
    """
    text = _THINK_BLOCK.sub("", content, count=1)
    fenced = _FENCED.match(text)
    return fenced.group("body") if fenced else text.strip()


def summarize_validation_error(error: ValidationError) -> str:
    """Quote a pydantic error concisely: one ``location: message`` per line, at most eight.

    Args:
        error: The validation error.

    Returns:
        The lines, joined by newlines.
    """
    details = error.errors(include_url=False, include_context=False)
    lines = []
    for detail in details[:_MAX_ERRORS_QUOTED]:
        location = ".".join(str(part) for part in detail["loc"]) or "(root)"
        lines.append(f"- {location}: {detail['msg']}")
    if len(details) > _MAX_ERRORS_QUOTED:
        lines.append(f"- … and {len(details) - _MAX_ERRORS_QUOTED} more errors")
    return "\n".join(lines)
