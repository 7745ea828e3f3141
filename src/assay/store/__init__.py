"""The store: pull requests, rounds, findings, and every model exchange (SQLAlchemy 2).

SQLite by default (one file, zero set-up); PostgreSQL for the service. The schema is migrated with
Alembic when the store is opened.

Example::

    store = Store.open("sqlite:///review.db")
    store.rounds.list_rounds(key)
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Engine

from assay.llm.client import CallRecord
from assay.store.db import create_store_engine, migrate
from assay.store.llm import SqlReplayCache, record_calls, record_tool_calls
from assay.store.rounds import PullRequestKey, RoundStore, RoundSummary
from assay.tools import ToolCallRecord

__all__ = [
    "PullRequestKey",
    "RoundStore",
    "RoundSummary",
    "SqlReplayCache",
    "Store",
    "create_store_engine",
    "migrate",
]


class Store:
    """One database: rounds, the replay cache and the call log."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rounds = RoundStore(engine)
        self.replay_cache = SqlReplayCache(engine)

    @classmethod
    def open(cls, url: str) -> Store:
        """Open (and migrate) the database at ``url``.

        Raises:
            StoreError: the database cannot be opened or migrated.
        """
        return cls(create_store_engine(url))

    def record_calls(self, round_id: int | None, calls: Iterable[CallRecord]) -> int:
        return record_calls(self.engine, round_id, calls)

    def record_tool_calls(self, round_id: int, calls: Iterable[ToolCallRecord]) -> int:
        return record_tool_calls(self.engine, round_id, calls)

    def close(self) -> None:
        self.engine.dispose()
