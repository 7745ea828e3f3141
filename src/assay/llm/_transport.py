"""Transport retries: timeouts, connection errors, 408, 429 and 5xx, with backoff.

The SDK's own retries are off (``max_retries=0``) so that every HTTP attempt is ours to count;
the count goes into the stage's call records and from there into the round's KPI. Semantic
re-asks (an invalid or truncated reply) are the client's business, not this module's.
"""

from __future__ import annotations

import email.utils
import math
import random
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

import httpx2
import openai
import structlog

from assay.errors import LLMError, LLMHTTPError, LLMOutputInvalid, LLMUnreachable

__all__ = ["AttemptLog", "MalformedResponse", "RetryPolicy", "Sleep", "send_with_retries"]

log = structlog.get_logger(__name__)

Sleep = Callable[[float], Awaitable[None]]
"""``asyncio.sleep``, or a recorder in tests."""

_RETRYABLE_STATUS = frozenset({408, 429})

_T = TypeVar("_T")


class MalformedResponse(Exception):
    """A 2xx answer whose body is not a chat completion (a proxy hiccup, a cut stream)."""

    def __init__(self, reason: str, body: str) -> None:
        super().__init__(reason)
        self.body = body


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry one request.

    Example::

        RetryPolicy(retries=4, backoff_base_s=1.0)  # waits ~1, 2, 4, 8 s (jittered)
    """

    retries: int
    """Retries after the first attempt."""
    backoff_base_s: float
    """The first wait; each retry doubles it, times a jitter factor in [0.5, 1]."""
    backoff_cap_s: float = 30.0
    retry_after_cap_s: float = 60.0
    """A server's ``Retry-After`` is honoured up to this many seconds."""


@dataclass
class AttemptLog:
    """Counts the HTTP attempts of one exchange, also when it ends in an error."""

    attempts: int = 0
    errors: list[str] = field(default_factory=list)


async def send_with_retries(
    send: Callable[[], Awaitable[_T]],
    policy: RetryPolicy,
    attempt_log: AttemptLog,
    *,
    endpoint: str,
    stage: str,
    sleep: Sleep,
    rng: random.Random,
) -> _T:
    """Run ``send`` until it succeeds, retrying what is transient.

    Args:
        send: One HTTP attempt; raises the SDK's exceptions or :class:`MalformedResponse`.
        policy: Retry budget and backoff.
        attempt_log: Incremented per attempt; read by the caller even after an error.
        endpoint: The base URL, for messages.
        stage: The stage, for messages and errors.
        sleep: Waits between attempts.
        rng: Jitter source.

    Returns:
        What ``send`` returned.

    Raises:
        LLMHTTPError: A non-retryable status (400, 401, 404, …) at once, or a retryable one
            that outlasted the budget.
        LLMUnreachable: No connection could be made, after every retry.
        LLMError: Every attempt timed out.
        LLMOutputInvalid: Every answer was a malformed body.
    """
    while True:
        attempt_log.attempts += 1
        try:
            return await send()
        except openai.APIStatusError as error:
            status = error.status_code
            body = error.response.text[:2000]
            attempt_log.errors.append(f"HTTP {status}")
            if not (status in _RETRYABLE_STATUS or status >= 500):
                raise LLMHTTPError(
                    f"the model endpoint {endpoint} answered HTTP {status} to stage {stage!r}: "
                    f"{_error_message(error)}",
                    stage=stage,
                    status_code=status,
                    body=body,
                ) from error
            if attempt_log.attempts > policy.retries:
                raise LLMHTTPError(
                    f"the model endpoint {endpoint} answered HTTP {status} to stage {stage!r} "
                    f"{attempt_log.attempts} times: {_error_message(error)}",
                    stage=stage,
                    status_code=status,
                    body=body,
                ) from error
            delay = _retry_delay(policy, attempt_log.attempts, rng, error.response.headers)
        except openai.APITimeoutError as error:
            attempt_log.errors.append("timeout")
            if attempt_log.attempts > policy.retries:
                raise LLMError(
                    f"the model endpoint {endpoint} did not answer stage {stage!r} in time "
                    f"({attempt_log.attempts} attempts)",
                    stage=stage,
                ) from error
            delay = _retry_delay(policy, attempt_log.attempts, rng, None)
        except openai.APIConnectionError as error:
            reason = _connection_reason(error)
            attempt_log.errors.append(reason)
            if attempt_log.attempts > policy.retries:
                raise LLMUnreachable(
                    f"cannot reach the model endpoint {endpoint}: {reason}", stage=stage
                ) from error
            delay = _retry_delay(policy, attempt_log.attempts, rng, None)
        except MalformedResponse as error:
            attempt_log.errors.append(f"malformed response: {error}")
            if attempt_log.attempts > policy.retries:
                raise LLMOutputInvalid(
                    f"the model endpoint {endpoint} answered stage {stage!r} with a body that is "
                    f"not a chat completion ({error}), {attempt_log.attempts} times",
                    stage=stage,
                    body=error.body[:2000],
                    errors=str(error),
                ) from error
            delay = _retry_delay(policy, attempt_log.attempts, rng, None)
        log.warning(
            "llm.retry",
            stage=stage,
            attempt=attempt_log.attempts,
            error=attempt_log.errors[-1],
            delay_s=round(delay, 3),
        )
        await sleep(delay)


def _retry_delay(
    policy: RetryPolicy, attempt: int, rng: random.Random, headers: httpx2.Headers | None
) -> float:
    """Seconds to wait before the next attempt: the server's word if it gave one, else backoff."""
    retry_after = _retry_after_seconds(headers) if headers is not None else None
    if retry_after is not None:
        return min(retry_after, policy.retry_after_cap_s)
    backoff: float = policy.backoff_base_s * 2.0 ** (attempt - 1)
    return min(backoff, policy.backoff_cap_s) * (0.5 + rng.random() / 2)


def _retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """Parse ``retry-after-ms`` or ``Retry-After``: seconds (fractions allowed) or an HTTP date."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        value = _finite_non_negative(milliseconds)
        if value is not None:
            return value / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _finite_non_negative(raw)
    if seconds is not None:
        return seconds
    try:
        moment = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())


def _finite_non_negative(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _error_message(error: openai.APIStatusError) -> str:
    """The server's own error message when the body has one, else the status line."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:500]
        if isinstance(inner, str):
            return inner[:500]
    return error.response.reason_phrase or "no message"


def _connection_reason(error: openai.APIConnectionError) -> str:
    """A short, lower-case cause: "connection refused", "connection closed by the server", …"""
    chain = _causes(error)
    if any(isinstance(cause, ConnectionRefusedError) for cause in chain):
        return "connection refused"
    if any(isinstance(cause, socket.gaierror) for cause in chain):
        return "unknown host"
    text = " ".join(str(cause) for cause in chain).lower()
    if "refused" in text:
        return "connection refused"
    if any(word in text for word in ("disconnect", "closed", "reset")):
        return "connection closed by the server"
    innermost = chain[-1]
    return f"connection error ({type(innermost).__name__}: {innermost})"


def _causes(error: BaseException) -> list[BaseException]:
    """The error and what caused it, outermost first (httpx wraps the OS error several times)."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain and len(chain) < 16:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def monotonic_ms(started: float) -> int:
    """Whole milliseconds since ``started`` (a ``time.perf_counter()`` value)."""
    return int((time.perf_counter() - started) * 1000)
