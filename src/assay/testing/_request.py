"""The request a scripted reply function sees: one parsed chat-completion call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["STAGE_HEADER", "ChatRequest", "message_text"]

_T = TypeVar("_T")

STAGE_HEADER = "x-assay-stage"
"""The header every Assay request names its pipeline stage in (lower-cased, as stored)."""


def message_text(content: object) -> str:
    """Return the plain text of a message's ``content``.

    Args:
        content: A string, a list of content parts (only ``{"type": "text", "text": ...}``
            parts carry text) or ``None``.

    Returns:
        The text, parts joined without separator; ``""`` when there is none.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""


@dataclass(frozen=True)
class ChatRequest:
    """One ``POST /v1/chat/completions`` call as the server received it.

    The properties read the body leniently: a field that is missing or of the wrong type
    reads as ``None`` (or empty), so a reply function can inspect malformed requests too.

    Example::

        def reply(request: ChatRequest) -> str:
            assert request.stage == "discover"
            assert request.max_tokens is not None
            return "ok"
    """

    body: dict[str, Any]
    """The parsed JSON body."""
    headers: dict[str, str] = field(default_factory=dict)
    """The HTTP headers, names lower-cased."""
    received_at: float = 0.0
    """``time.monotonic()`` when the server read the request."""

    @property
    def stage(self) -> str | None:
        """The value of the ``X-Assay-Stage`` header, or ``None`` without one."""
        return self.headers.get(STAGE_HEADER)

    @property
    def model(self) -> str | None:
        """The requested model id."""
        return _typed(self.body.get("model"), str)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages, in order; entries that are not JSON objects are left out."""
        messages = self.body.get("messages")
        if not isinstance(messages, list):
            return []
        return [message for message in messages if isinstance(message, dict)]

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tool definitions, or ``None`` when the request offers no tools."""
        tools = self.body.get("tools")
        if not isinstance(tools, list):
            return None
        return [tool for tool in tools if isinstance(tool, dict)]

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The ``response_format`` object (``json_schema``, ``json_object``), if any."""
        return _typed(self.body.get("response_format"), dict)

    @property
    def max_tokens(self) -> int | None:
        """``max_completion_tokens``, else ``max_tokens``, else ``None``."""
        for key in ("max_completion_tokens", "max_tokens"):
            value = self.body.get(key)
            # bool is an int subclass; JSON true is not a token limit.
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    @property
    def seed(self) -> int | None:
        """The sampling seed, if any."""
        seed = self.body.get("seed")
        return seed if isinstance(seed, int) and not isinstance(seed, bool) else None

    @property
    def temperature(self) -> float | None:
        """The sampling temperature, if any."""
        temperature = self.body.get("temperature")
        if isinstance(temperature, int | float) and not isinstance(temperature, bool):
            return float(temperature)
        return None

    @property
    def last_user_text(self) -> str:
        """The text of the last ``user`` message; ``""`` when there is none."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return message_text(message.get("content"))
        return ""

    @property
    def system_text(self) -> str:
        """The text of every ``system`` and ``developer`` message, joined by blank lines."""
        return "\n\n".join(
            message_text(message.get("content"))
            for message in self.messages
            if message.get("role") in ("system", "developer")
        )


def _typed(value: object, kind: type[_T]) -> _T | None:
    return value if isinstance(value, kind) else None
