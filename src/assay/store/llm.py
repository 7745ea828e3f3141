"""The replay cache and the per-call log of model usage, in the store's database."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from assay.llm.cache import CachedExchange
from assay.llm.client import CallRecord
from assay.store.schema import LLMCallRow, LLMExchangeRow, ToolCallRow, as_utc
from assay.tools import ToolCallRecord

__all__ = ["SqlReplayCache", "record_calls", "record_tool_calls"]


class SqlReplayCache:
    """``assay.llm.cache.ReplayCache`` backed by the ``llm_exchanges`` table."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def get(self, key: str) -> CachedExchange | None:
        with Session(self._engine) as session:
            row = session.get(LLMExchangeRow, key)
            if row is None:
                return None
            return CachedExchange(
                key=row.key,
                stage=row.stage,
                model=row.model,
                request=row.request,
                response=row.response,
                prompt_tokens=row.prompt_tokens,
                completion_tokens=row.completion_tokens,
                cached_prompt_tokens=row.cached_prompt_tokens,
                latency_ms=row.latency_ms,
                created_at=as_utc(row.created_at),
                source="batch" if row.source == "batch" else "http",
            )

    def put(self, exchange: CachedExchange) -> None:
        with Session(self._engine) as session, session.begin():
            session.merge(
                LLMExchangeRow(
                    key=exchange.key,
                    stage=exchange.stage,
                    model=exchange.model,
                    request=exchange.request,
                    response=exchange.response,
                    prompt_tokens=exchange.prompt_tokens,
                    completion_tokens=exchange.completion_tokens,
                    cached_prompt_tokens=exchange.cached_prompt_tokens,
                    latency_ms=exchange.latency_ms,
                    source=exchange.source,
                    created_at=exchange.created_at,
                )
            )

    def __len__(self) -> int:
        with Session(self._engine) as session:
            return session.scalar(select(func.count()).select_from(LLMExchangeRow)) or 0


def record_calls(engine: Engine, round_id: int | None, calls: Iterable[CallRecord]) -> int:
    """Append ``calls`` to the call log of a round (``None``: not tied to a stored round)."""
    now = datetime.now(UTC)
    rows = [
        LLMCallRow(
            round_id=round_id,
            stage=call.stage,
            key=call.key,
            cached=call.cached,
            attempts=call.attempts,
            ok=call.ok,
            error=call.error,
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
            cached_prompt_tokens=call.cached_prompt_tokens,
            latency_ms=call.latency_ms,
            created_at=now,
        )
        for call in calls
    ]
    with Session(engine) as session, session.begin():
        session.add_all(rows)
    return len(rows)


def record_tool_calls(engine: Engine, round_id: int, calls: Iterable[ToolCallRecord]) -> int:
    """Append the repository tool calls agentic stages made for a round."""
    now = datetime.now(UTC)
    rows = [
        ToolCallRow(
            round_id=round_id,
            tool=call.tool,
            arguments=call.arguments,
            ok=call.ok,
            error=call.error,
            output_chars=call.output_chars,
            duration_ms=call.duration_ms,
            created_at=now,
        )
        for call in calls
    ]
    with Session(engine) as session, session.begin():
        session.add_all(rows)
    return len(rows)
