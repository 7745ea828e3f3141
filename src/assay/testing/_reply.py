"""What a scripted server answers: replies, faults, and the latency model."""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from assay.testing._request import ChatRequest

__all__ = [
    "Fault",
    "FaultKind",
    "LatencyModel",
    "Reply",
    "ReplyFunction",
    "ReplyValue",
    "ToolCall",
    "json_reply",
    "tool_call_reply",
]


class _SupportsModelDumpJson(Protocol):
    """A pydantic model, or anything else that serializes itself to JSON the same way."""

    def model_dump_json(self) -> str: ...


@dataclass(frozen=True)
class ToolCall:
    """One function call in an assistant reply.

    Example::

        ToolCall("read_file", '{"path": "src/app.py"}')
    """

    name: str
    arguments: str = "{}"
    """The arguments as a JSON string, exactly as the model would send them (may be invalid)."""
    id: str = ""
    """The call id; empty means the server assigns ``call_<request>_<index>``."""


@dataclass(frozen=True)
class Reply:
    """One assistant message, with the usage and timing the server reports for it.

    Example::

        Reply("looks good")
        Reply('{"findings": [', finish_reason="length")  # truncated by the token limit
        Reply(tool_calls=[ToolCall("grep", '{"pattern": "TODO"}')])
    """

    content: str | None = None
    tool_calls: Sequence[ToolCall] | None = None
    finish_reason: str | None = None
    """``None`` means ``"tool_calls"`` when there are tool calls, else ``"stop"``."""
    prompt_tokens: int | None = None
    """``None`` means estimated from the request's message text (characters / 4)."""
    completion_tokens: int | None = None
    """``None`` means estimated from the reply's text (characters / 4)."""
    cached_tokens: int = 0
    """Reported as ``usage.prompt_tokens_details.cached_tokens``."""
    delay_s: float = 0.0
    """Seconds to wait before answering, on top of the server's latency model."""

    @property
    def resolved_finish_reason(self) -> str:
        """The ``finish_reason`` the server sends for this reply."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


class FaultKind(enum.StrEnum):
    """How a :class:`Fault` misbehaves."""

    STATUS = "status"
    """An HTTP error status with an OpenAI-style error body."""
    MALFORMED_JSON = "malformed_json"
    """Status 200 with a body that is not valid JSON."""
    DROP_CONNECTION = "drop_connection"
    """The connection is closed without any response."""
    DELAY = "delay"
    """Wait, then answer normally (to trigger client timeouts)."""
    REPLY = "reply"
    """A fixed, well-formed reply that is wrong in content (truncated, invalid JSON)."""


@dataclass(frozen=True)
class Fault:
    """A deterministic failure, returned by a reply function or queued on the server.

    Build one with the class methods rather than the constructor.

    Example::

        server.enqueue_faults(Fault.status(429, retry_after=0), Fault.status(500))
        server.enqueue_faults(Fault.truncated('{"findings": ['), stage="discover")
    """

    kind: FaultKind
    status_code: int = 200
    body: str | None = None
    """The raw response body; ``None`` means an OpenAI-style error body from ``message``."""
    message: str = ""
    retry_after: float | None = None
    """Seconds sent in the ``Retry-After`` header; ``None`` sends no header."""
    delay_s: float = 0.0
    reply: ReplyValue | None = None
    """What to answer after a delay (``None``: call the reply function), or the fixed reply."""

    @classmethod
    def status(
        cls,
        status_code: int,
        *,
        message: str | None = None,
        retry_after: float | None = None,
        body: str | Mapping[str, Any] | None = None,
    ) -> Fault:
        """Answer with an HTTP error status.

        Args:
            status_code: The status, e.g. 429, 500 or 503.
            message: The ``error.message``; a generic one by default.
            retry_after: Seconds for the ``Retry-After`` header (fractions allowed); none by
                default.
            body: A raw body (string) or JSON body (mapping) replacing the OpenAI-style error.

        Returns:
            The fault.
        """
        if not 400 <= status_code <= 599:
            raise ValueError(f"an error status is 400-599, not {status_code}")
        raw_body = body if isinstance(body, str) or body is None else json.dumps(dict(body))
        return cls(
            FaultKind.STATUS,
            status_code=status_code,
            body=raw_body,
            message=message if message is not None else _default_message(status_code),
            retry_after=retry_after,
        )

    @classmethod
    def malformed_json(cls, body: str = '{"id": "chatcmpl-malformed", "choices": [') -> Fault:
        """Answer 200 with a body that does not parse as JSON.

        Args:
            body: The raw body; a cut-off completion object by default.

        Returns:
            The fault.
        """
        return cls(FaultKind.MALFORMED_JSON, status_code=200, body=body)

    @classmethod
    def drop_connection(cls) -> Fault:
        """Close the connection without sending any response.

        Returns:
            The fault.
        """
        return cls(FaultKind.DROP_CONNECTION)

    @classmethod
    def delay(cls, seconds: float, *, then: ReplyValue | None = None) -> Fault:
        """Wait, then answer with ``then`` or, by default, the reply function.

        Args:
            seconds: How long to wait before answering; longer than the client's timeout
                to make it time out.
            then: What to answer after the wait; ``None`` calls the reply function.

        Returns:
            The fault.
        """
        return cls(FaultKind.DELAY, delay_s=seconds, reply=then)

    @classmethod
    def truncated(cls, content: str = "", *, completion_tokens: int | None = None) -> Fault:
        """Answer with partial content and ``finish_reason: "length"``.

        Args:
            content: The partial content.
            completion_tokens: The reported completion tokens; estimated by default.

        Returns:
            The fault.
        """
        truncated_reply = Reply(
            content, finish_reason="length", completion_tokens=completion_tokens
        )
        return cls(FaultKind.REPLY, reply=truncated_reply)

    @classmethod
    def invalid_content(cls, content: str = "this is not JSON") -> Fault:
        """Answer a well-formed completion whose content is not what the schema asks for.

        Args:
            content: The content, e.g. invalid JSON or JSON of the wrong shape.

        Returns:
            The fault.
        """
        return cls(FaultKind.REPLY, reply=Reply(content))


@dataclass(frozen=True)
class LatencyModel:
    """Simulated model latency, added to every reply: ``ttft_s + completion_tokens / tokens_per_s``.

    Example::

        ScriptedLLMServer(reply, latency=LatencyModel(ttft_s=0.3, tokens_per_s=60))
    """

    ttft_s: float = 0.0
    """Time to first token, in seconds."""
    tokens_per_s: float | None = None
    """Decoding speed; ``None`` means instant decoding."""

    def __post_init__(self) -> None:
        if self.ttft_s < 0:
            raise ValueError(f"ttft_s must be >= 0, not {self.ttft_s}")
        if self.tokens_per_s is not None and self.tokens_per_s <= 0:
            raise ValueError(f"tokens_per_s must be > 0, not {self.tokens_per_s}")

    def seconds_for(self, completion_tokens: int) -> float:
        """Return how long a reply of ``completion_tokens`` tokens takes.

        Args:
            completion_tokens: The reply's completion tokens.

        Returns:
            The simulated latency in seconds.
        """
        decoding_s = completion_tokens / self.tokens_per_s if self.tokens_per_s else 0.0
        return self.ttft_s + decoding_s


ReplyValue: TypeAlias = Reply | Fault | str | dict[str, Any] | list[Any] | _SupportsModelDumpJson
"""What a reply function returns: a Reply, a Fault, a ``str`` (the content), or a dict, list
or pydantic model (serialized to JSON as the content)."""

ReplyFunction: TypeAlias = Callable[[ChatRequest], ReplyValue]
"""Called once per request (from the server's threads, possibly concurrently)."""


def json_reply(value: object, **reply_fields: Any) -> Reply:
    """Return a reply whose content is ``value`` serialized as JSON.

    Args:
        value: Any JSON-serializable value, or a pydantic model.
        **reply_fields: Other :class:`Reply` fields, e.g. ``cached_tokens=100``.

    Returns:
        The reply.

    Example::

        json_reply({"findings": []}, completion_tokens=5)
    """
    return Reply(content=to_json_text(value), **reply_fields)


def tool_call_reply(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    call_id: str = "",
    content: str | None = None,
) -> Reply:
    """Return a reply that calls one tool.

    Args:
        name: The function name.
        arguments: The arguments, serialized to the JSON string the API sends.
        call_id: The call id; assigned by the server when empty.
        content: Text sent beside the call, if any.

    Returns:
        The reply, with ``finish_reason: "tool_calls"``.
    """
    call = ToolCall(name, json.dumps(dict(arguments or {})), call_id)
    return Reply(content=content, tool_calls=[call])


def to_json_text(value: object) -> str:
    """Serialize a reply value to JSON text (pydantic models through ``model_dump_json``)."""
    model_dump_json = getattr(value, "model_dump_json", None)
    if callable(model_dump_json):
        text = model_dump_json()
        if isinstance(text, str):
            return text
    return json.dumps(value, ensure_ascii=False)


def _default_message(status_code: int) -> str:
    if status_code == 429:
        return "Rate limit reached (scripted fault)."
    if status_code >= 500:
        return f"The server had an error while processing your request (scripted {status_code})."
    return f"Scripted error {status_code}."
