"""The replay cache: every LLM exchange, stored under the hash of its request.

The client reads it before calling the endpoint and writes every exchange it makes, so a rerun
with identical inputs is served without HTTP, reps never collapse into one entry (their requests
differ), and a batch run continues where the imported answers leave off. The storage is behind a
two-method protocol; the database-backed implementation lives in ``assay.store``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "REQUEST_KEY_VERSION",
    "CachedExchange",
    "MemoryReplayCache",
    "ReplayCache",
    "canonical_request_json",
    "key_of_canonical",
    "request_key",
]

REQUEST_KEY_VERSION = "assay-llm-request-v1"
"""Hashed in front of every request; bumping it invalidates every cached answer at once."""


class CachedExchange(BaseModel):
    """One request and the endpoint's answer to it."""

    model_config = ConfigDict(frozen=True)

    key: str
    """:func:`request_key` of ``request`` (for batch imports: the batch line's ``custom_id``)."""
    stage: str
    """The ``X-Assay-Stage`` of the request; empty when unknown (batch imports)."""
    model: str
    request: dict[str, Any] = Field(default_factory=dict)
    """The request body as sent; ``{}`` for batch imports (the output file does not carry it)."""
    response: dict[str, Any]
    """The raw ``chat.completion`` JSON object."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Prompt tokens the provider served from its prefix cache."""
    latency_ms: int = 0
    """Wall time of the HTTP attempt that produced the answer (0 for batch imports)."""
    created_at: datetime
    source: Literal["http", "batch"] = "http"


class ReplayCache(Protocol):
    """Where exchanges are kept. Implementations must be safe to call from one event loop's
    tasks (calls are synchronous and short) and may be backed by anything."""

    def get(self, key: str) -> CachedExchange | None:
        """Return the exchange stored under ``key``, or ``None``."""
        ...

    def put(self, exchange: CachedExchange) -> None:
        """Store ``exchange`` under ``exchange.key``, replacing any earlier one."""
        ...


class MemoryReplayCache:
    """A replay cache in a dict, for tests and one-off runs.

    Example::

        cache = MemoryReplayCache()
        client = LLMClient(settings, cache)
    """

    def __init__(self) -> None:
        self._exchanges: dict[str, CachedExchange] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedExchange | None:
        """Return the exchange stored under ``key``, or ``None``."""
        with self._lock:
            return self._exchanges.get(key)

    def put(self, exchange: CachedExchange) -> None:
        """Store ``exchange`` under its key, replacing any earlier one."""
        with self._lock:
            self._exchanges[exchange.key] = exchange

    def __len__(self) -> int:
        with self._lock:
            return len(self._exchanges)

    def keys(self) -> list[str]:
        """Return the stored keys, in insertion order."""
        with self._lock:
            return list(self._exchanges)


def canonical_request_json(body: dict[str, Any]) -> str:
    """Return the canonical JSON text of a request body, the input of :func:`request_key`.

    Normalization: top-level keys whose value is ``None`` are dropped (absent and null mean
    the same to the endpoint); keys are sorted at every depth; separators are ``,`` and ``:``
    without spaces; non-ASCII characters are kept as UTF-8 (not ``\\u`` escapes); list order
    is kept (message order matters).

    Args:
        body: A chat-completions request body.

    Returns:
        The canonical JSON text.
    """
    present = {key: value for key, value in body.items() if value is not None}
    return json.dumps(
        present, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def request_key(body: dict[str, Any]) -> str:
    """Return the replay-cache key of a request body.

    The key is the hex SHA-256 of ``REQUEST_KEY_VERSION``, a newline, and
    :func:`canonical_request_json` of the body, UTF-8 encoded. The body holds everything that
    changes the answer (model, messages, max_tokens, temperature, seed, response_format,
    tools), so two reps with different seeds or tails never share a key.

    Args:
        body: A chat-completions request body.

    Returns:
        64 lowercase hex digits.

    Example::

        >>> request_key({"model": "m", "messages": []})[:12]
        '9b8e6db0a210'
    """
    return key_of_canonical(canonical_request_json(body))


def key_of_canonical(canonical: str) -> str:
    """:func:`request_key` from an already computed :func:`canonical_request_json` text."""
    text = f"{REQUEST_KEY_VERSION}\n{canonical}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
