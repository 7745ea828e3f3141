"""The one way Assay talks to a model: cached, retried, validated, accounted per stage.

``LLMClient.call_stage`` sends a stage's messages, validates the reply against the stage's
pydantic model, re-asks (quoting the errors) when the reply is invalid or truncated, and returns
the value with one :class:`CallRecord` per exchange. Every exchange goes through the replay cache
first; in batch-export mode a cache miss raises ``LLMPending`` instead of calling the endpoint.

Example::

    async with LLMClient(settings, cache) as client:
        call = await client.call_stage("discover", messages, DiscoveryReply, seed=7)
        call.value.findings, call.calls
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Generic, Literal, Self, TypeVar

import httpx2
import openai
import structlog
from pydantic import BaseModel, ConfigDict, ValidationError

from assay.errors import ConfigError, LLMError, LLMOutputInvalid, LLMPending, LLMTruncated
from assay.llm._completion import (
    CompletionView,
    extract_json_text,
    parse_completion_body,
    summarize_validation_error,
    view_completion,
)
from assay.llm._transport import (
    AttemptLog,
    MalformedResponse,
    RetryPolicy,
    Sleep,
    monotonic_ms,
    send_with_retries,
)
from assay.llm.cache import (
    CachedExchange,
    ReplayCache,
    canonical_request_json,
    key_of_canonical,
)
from assay.llm.schemas import shared_strict_schema
from assay.llm.settings import LLMSettings

__all__ = [
    "STAGE_HEADER",
    "CallRecord",
    "ClientMode",
    "Completion",
    "LLMClient",
    "Message",
    "StageCall",
    "calls_of",
]

log = structlog.get_logger(__name__)

STAGE_HEADER = "X-Assay-Stage"
"""Sent with every request: the stage's name, so proxies can account cost and latency per stage."""

Message = dict[str, Any]
"""A chat message as the endpoint takes it: ``{"role": "user", "content": "…"}``."""

ClientMode = Literal["live", "batch-export"]

ReplyT = TypeVar("ReplyT", bound=BaseModel)

_CALLS_ATTRIBUTE = "calls"
_ECHO_LIMIT = 4000
"""Characters of an unusable reply echoed back in a re-ask (the rest costs tokens for nothing)."""
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


class CallRecord(BaseModel):
    """One exchange with the model (a first ask or a re-ask), as the KPI counts it."""

    model_config = ConfigDict(frozen=True)

    stage: str
    key: str
    """The request's replay-cache key."""
    cached: bool
    """Served from the replay cache (no HTTP)."""
    attempts: int
    """HTTP attempts, retries included (0 when cached or pending)."""
    latency_ms: int
    """Wall time spent on this exchange in this run, retries and backoff included."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    finish_reason: str | None = None
    ok: bool
    """The exchange produced a reply that validated."""
    error: str | None = None
    service_ms: int = 0
    """Time the endpoint took (the answering HTTP attempt, inside the concurrency bound): what
    a round's critical path is made of. ``latency_ms`` adds queueing, retries and backoff."""
    chain: int = 0
    """Identifies the asyncio task that made the call: calls of one chain ran one after the
    other (an agentic loop, re-asks), calls of different chains could run side by side."""


@dataclass(frozen=True)
class Completion:
    """One answered exchange, before any validation of its content."""

    key: str
    request: dict[str, Any]
    response: dict[str, Any]
    """The raw ``chat.completion`` JSON."""
    view: CompletionView
    record: CallRecord


@dataclass(frozen=True)
class StageCall(Generic[ReplyT]):
    """A stage's validated reply and every exchange it took to get it."""

    value: ReplyT
    calls: tuple[CallRecord, ...]
    raw_message: dict[str, Any]
    """The final assistant message as the endpoint sent it (content, tool_calls, extras)."""


def calls_of(error: BaseException) -> tuple[CallRecord, ...]:
    """Return the call records an ``LLMError`` raised by the client carries (``()`` if none).

    Args:
        error: An exception raised by :meth:`LLMClient.call_stage` or :meth:`LLMClient.complete`.

    Returns:
        The records of every exchange made before the error, the failed one last.
    """
    calls = getattr(error, _CALLS_ATTRIBUTE, ())
    return tuple(call for call in calls if isinstance(call, CallRecord))


class LLMClient:
    """An OpenAI-compatible chat client with replay cache, retries, re-asks and accounting.

    Use one instance per event loop and close it (``async with`` or :meth:`aclose`).

    Args:
        settings: Endpoint, model and request policy.
        cache: The replay cache; ``None`` disables caching (batch export needs one).
        mode: ``"live"`` calls the endpoint on a cache miss; ``"batch-export"`` never does
            HTTP and raises ``LLMPending`` on a miss.
        no_cache: Do not read the cache (answers are still written to it).
        http_client: The HTTP client for the SDK (tests pass one with a mock transport).
        sleep: Waits between retries (tests pass a recorder).
        rng: Jitter source for backoff.

    Raises:
        ConfigError: ``batch-export`` without a cache, or with ``no_cache``.
    """

    def __init__(
        self,
        settings: LLMSettings,
        cache: ReplayCache | None = None,
        *,
        mode: ClientMode = "live",
        no_cache: bool = False,
        http_client: httpx2.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if mode == "batch-export" and cache is None:
            raise ConfigError("batch export needs the replay cache; do not disable the cache")
        if mode == "batch-export" and no_cache:
            raise ConfigError(
                "--no-cache cannot be combined with batch export: imported answers are read "
                "from the cache"
            )
        self._settings = settings
        self._cache = cache
        self._mode: ClientMode = mode
        self._no_cache = no_cache
        self._http_client = http_client
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._semaphore = asyncio.Semaphore(settings.concurrency)
        self._openai: openai.AsyncOpenAI | None = None
        self._policy = RetryPolicy(
            retries=settings.transport_retries, backoff_base_s=settings.backoff_base_s
        )

    @property
    def settings(self) -> LLMSettings:
        """The settings this client was built with."""
        return self._settings

    @property
    def mode(self) -> ClientMode:
        """``"live"`` or ``"batch-export"``."""
        return self._mode

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections (a no-op when none were opened)."""
        if self._openai is not None:
            await self._openai.close()
            self._openai = None
        elif self._http_client is not None:
            await self._http_client.aclose()

    def build_request(
        self,
        messages: list[Message],
        *,
        response_format: dict[str, Any] | None = None,
        seed: int | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Return the request body for one exchange (also what the cache key hashes).

        The stage is not part of the body: it travels in a header, so it never changes the
        cache key (identical questions share an answer whatever stage asks them).

        Args:
            messages: The conversation.
            response_format: The ``response_format`` object, or ``None`` for free text.
            seed: Sent when given (reps differ by seed).
            temperature: Defaults to the settings' temperature.
            max_tokens: Defaults to the settings' ``max_tokens``; always sent.
            tools: Function tools for agentic stages.

        Returns:
            The body, with ``None`` values left out.
        """
        body: dict[str, Any] = {
            "model": self._settings.model,
            "messages": messages,
            "max_tokens": max_tokens if max_tokens is not None else self._settings.max_tokens,
            "temperature": temperature if temperature is not None else self._settings.temperature,
        }
        if seed is not None:
            body["seed"] = seed
        if response_format is not None:
            body["response_format"] = response_format
        if tools:
            body["tools"] = tools
        return body

    def response_format_for(
        self, stage: str, reply_model: type[BaseModel]
    ) -> dict[str, Any] | None:
        """Return the ``response_format`` that asks for ``reply_model``'s JSON.

        Args:
            stage: Names the schema (``json_schema.name``).
            reply_model: The stage's reply model.

        Returns:
            The form ``settings.response_format`` names; ``None`` for ``none``.
        """
        kind = self._settings.response_format
        if kind == "none":
            return None
        if kind == "json_object":
            return {"type": "json_object"}
        if kind == "json_object_schema":
            return {"type": "json_object", "schema": shared_strict_schema(reply_model)}
        return {
            "type": "json_schema",
            "json_schema": {
                "name": _SCHEMA_NAME.sub("_", stage)[:64] or "reply",
                "schema": shared_strict_schema(reply_model),
                "strict": True,
            },
        }

    async def call_stage(
        self,
        stage: str,
        messages: list[Message],
        reply_model: type[ReplyT],
        *,
        seed: int | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> StageCall[ReplyT]:
        """Ask a stage's question and return its validated reply.

        An invalid reply (not JSON, or not matching ``reply_model``) or a truncated one
        (``finish_reason == "length"``) is re-asked up to ``settings.reasks`` times: the reply
        and a short correction request are appended to the conversation. Each re-ask is an
        exchange of its own (own cache key, own record).

        Args:
            stage: The stage's name; sent as the ``X-Assay-Stage`` header.
            messages: The conversation (system instructions first).
            reply_model: The pydantic model the reply must validate against.
            seed: Sent when given.
            temperature: Defaults to the settings' temperature.
            max_tokens: Defaults to the settings' ``max_tokens``.
            tools: Function tools (the reply must still end in JSON content).

        Returns:
            The value and the records of every exchange.

        Raises:
            LLMOutputInvalid: Still invalid after the re-asks (or a malformed HTTP body).
            LLMTruncated: Still truncated after the re-asks.
            LLMPending: Batch export and the exchange is not in the cache.
            LLMHTTPError: An HTTP error that retries did not cure.
            LLMUnreachable: No connection to the endpoint.
            LLMError: Timeouts outlasted the retries.

            Every error carries the records made so far; read them with :func:`calls_of`.
        """
        response_format = self.response_format_for(stage, reply_model)
        conversation = list(messages)
        records: list[CallRecord] = []
        for ask in range(self._settings.reasks + 1):
            body = self.build_request(
                conversation,
                response_format=response_format,
                seed=seed,
                temperature=temperature,
                max_tokens=max_tokens,
                tools=tools,
            )
            try:
                completion = await self.complete(stage, body)
            except LLMError as error:
                raise _with_calls(error, [*records, *calls_of(error)]) from None
            content = completion.view.content
            if completion.view.finish_reason == "length":
                problem: LLMError = LLMTruncated(
                    f"stage {stage!r}: the reply was cut at max_tokens={body['max_tokens']} "
                    f"after {ask + 1} asks",
                    stage=stage,
                )
                records.append(_failed(completion.record, "truncated (finish_reason=length)"))
                follow_up = _truncation_request(body["max_tokens"])
            else:
                value, summary = _validate(completion.view, reply_model)
                if value is not None:
                    records.append(completion.record)
                    return StageCall(
                        value=value, calls=tuple(records), raw_message=completion.view.message
                    )
                problem = LLMOutputInvalid(
                    f"stage {stage!r}: the reply does not match the schema after "
                    f"{ask + 1} asks:\n{summary}",
                    stage=stage,
                    body=(content or "")[:_ECHO_LIMIT],
                    errors=summary,
                )
                records.append(_failed(completion.record, f"invalid reply: {summary}"))
                follow_up = _correction_request(summary)
            log.info("llm.reask", stage=stage, ask=ask + 1, problem=type(problem).__name__)
            conversation = [
                *conversation,
                {"role": "assistant", "content": (content or "")[:_ECHO_LIMIT]},
                {"role": "user", "content": follow_up},
            ]
        raise _with_calls(problem, records)

    async def complete(self, stage: str, body: dict[str, Any]) -> Completion:
        """Run one exchange: from the replay cache, or over HTTP (then stored).

        Agentic stages use this directly to read tool calls from ``view.message``.

        Args:
            stage: Sent as the ``X-Assay-Stage`` header and recorded.
            body: The request body (see :meth:`build_request`).

        Returns:
            The answered exchange; ``record.ok`` is true (the content is not validated here).

        Raises:
            LLMPending: Batch export and the exchange is not in the cache.
            LLMError: See :meth:`call_stage`; the error carries this exchange's record.
        """
        # One serialization serves both the cache key and the bytes sent.
        canonical = canonical_request_json(body)
        key = key_of_canonical(canonical)
        started = time.perf_counter()
        cached = self._read_cache(key)
        if cached is not None:
            view = view_completion(cached.response)
            record = _record(stage, key, view, cached=True, attempts=0, started=started)
            log.info("llm.call", **record.model_dump(exclude={"key"}), key=key[:12])
            return Completion(key, body, cached.response, view, record)
        if self._mode == "batch-export":
            pending = LLMPending(
                f"stage {stage!r}: request {key[:12]} is not answered yet (batch export)",
                stage=stage,
                key=key,
                body=body,
            )
            record = CallRecord(
                stage=stage, key=key, cached=False, attempts=0, latency_ms=0, ok=False,
                error="pending (batch export)",
            )  # fmt: skip
            raise _with_calls(pending, [record])

        attempt_log = AttemptLog()
        try:
            response, latency_ms = await send_with_retries(
                lambda: self._send_once(stage, canonical.encode("utf-8")),
                self._policy,
                attempt_log,
                endpoint=self._settings.base_url,
                stage=stage,
                sleep=self._sleep,
                rng=self._rng,
            )
        except LLMError as error:
            record = CallRecord(
                stage=stage, key=key, cached=False, attempts=attempt_log.attempts,
                latency_ms=monotonic_ms(started), ok=False, error=str(error),
            )  # fmt: skip
            log.info("llm.call_failed", stage=stage, key=key[:12], error=str(error))
            _with_calls(error, [record])
            raise
        view = view_completion(response)
        record = _record(
            stage, key, view, cached=False, attempts=attempt_log.attempts, started=started
        ).model_copy(update={"service_ms": latency_ms})
        self._write_cache(stage, key, body, response, view, latency_ms)
        log.info("llm.call", **record.model_dump(exclude={"key"}), key=key[:12])
        return Completion(key, body, response, view, record)

    async def _send_once(self, stage: str, content: bytes) -> tuple[dict[str, Any], int]:
        """One HTTP attempt, inside the concurrency bound; returns the parsed body and latency."""
        sdk = self._sdk()
        async with self._semaphore:
            started = time.perf_counter()
            # The body is already plain JSON: send its bytes as they are. (``create(**body)``
            # would walk every message through the SDK's type transforms on each attempt.)
            raw = await sdk.post(
                "/chat/completions",
                cast_to=httpx2.Response,
                content=content,
                options={"headers": {STAGE_HEADER: stage, "Content-Type": "application/json"}},
            )
            text = raw.text
            latency_ms = monotonic_ms(started)
        return parse_completion_body(text), latency_ms

    def _sdk(self) -> openai.AsyncOpenAI:
        # Created on first use: batch export and fully cached runs never open a connection.
        if self._openai is None:
            self._openai = openai.AsyncOpenAI(
                base_url=self._settings.base_url,
                api_key=self._settings.api_key or "none",
                max_retries=0,
                timeout=self._settings.timeout_s,
                http_client=self._http_client,
            )
        return self._openai

    def _read_cache(self, key: str) -> CachedExchange | None:
        if self._cache is None or self._no_cache:
            return None
        exchange = self._cache.get(key)
        if exchange is None:
            return None
        try:
            view_completion(exchange.response)
        except MalformedResponse:
            # Every stored answer was checked on the way in; a bad one is a corrupt row, and
            # asking again is better than failing the stage on it.
            log.warning("llm.cache_entry_malformed", key=key[:12])
            return None
        return exchange

    def _write_cache(
        self,
        stage: str,
        key: str,
        body: dict[str, Any],
        response: dict[str, Any],
        view: CompletionView,
        latency_ms: int,
    ) -> None:
        if self._cache is None:
            return
        self._cache.put(
            CachedExchange(
                key=key,
                stage=stage,
                model=str(body["model"]),
                request=json.loads(json.dumps(body)),
                response=response,
                prompt_tokens=view.prompt_tokens,
                completion_tokens=view.completion_tokens,
                cached_prompt_tokens=view.cached_prompt_tokens,
                latency_ms=latency_ms,
                created_at=datetime.now(UTC),
                source="http",
            )
        )


def _validate(view: CompletionView, reply_model: type[ReplyT]) -> tuple[ReplyT | None, str]:
    """Return the validated reply, or ``None`` and the problems quoted for a re-ask."""
    if view.content is None:
        tool_calls = view.message.get("tool_calls") or []
        names = [str((call.get("function") or {}).get("name", "?")) for call in tool_calls]
        listed = f" (it made tool calls: {', '.join(names)})" if names else ""
        return None, f"- (root): the reply has no content{listed}; a JSON object is required"
    try:
        return reply_model.model_validate_json(extract_json_text(view.content)), ""
    except ValidationError as error:
        return None, summarize_validation_error(error)


def _record(
    stage: str,
    key: str,
    view: CompletionView,
    *,
    cached: bool,
    attempts: int,
    started: float,
) -> CallRecord:
    return CallRecord(
        stage=stage,
        key=key,
        cached=cached,
        attempts=attempts,
        latency_ms=monotonic_ms(started),
        prompt_tokens=view.prompt_tokens,
        completion_tokens=view.completion_tokens,
        cached_prompt_tokens=view.cached_prompt_tokens,
        finish_reason=view.finish_reason,
        ok=True,
        chain=_chain_id(),
    )


def _chain_id() -> int:
    task = asyncio.current_task()
    return id(task) if task is not None else 0


def _failed(record: CallRecord, error: str) -> CallRecord:
    return record.model_copy(update={"ok": False, "error": error})


def _with_calls(error: LLMError, records: list[CallRecord]) -> LLMError:
    # errors.py is shared and has no slot for records; the attribute is read via calls_of().
    setattr(error, _CALLS_ATTRIBUTE, tuple(records))
    return error


def _correction_request(summary: str) -> str:
    return (
        "Your reply is not valid against the required JSON schema:\n"
        f"{summary}\n"
        "Reply again with the complete, corrected JSON object only: no prose, no code fence."
    )


def _truncation_request(max_tokens: int) -> str:
    return (
        f"Your reply was cut off at the output limit ({max_tokens} tokens), so it is not valid "
        "JSON. Reply again with a complete JSON object that is shorter: keep the most severe "
        "items, and shorten evidence and suggestions. JSON only: no prose, no code fence."
    )
