"""The store on SQLite and PostgreSQL: migrations, rounds, the replay cache, the call log."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, inspect, select
from sqlalchemy.orm import Session

from assay.diff.types import Anchor, AnchorMode
from assay.errors import StoreError
from assay.llm.cache import CachedExchange
from assay.llm.client import CallRecord
from assay.model import (
    Finding,
    FindingSource,
    Kpi,
    PullRequestMeta,
    ReportedFinding,
    RoundResult,
    Severity,
)
from assay.store import PullRequestKey, Store
from assay.store.schema import LLMCallRow


def _result(head_sha: str, round_index: int, *, blocking: bool = True) -> RoundResult:
    finding = Finding(
        severity=Severity.P0,
        category="correctness",
        title="Undefined name `summ`",
        path="calc.py",
        line=6,
        source=FindingSource.STATIC,
        rule="F821",
        certain_failure=True,
    )
    return RoundResult(
        pr=PullRequestMeta(
            base_ref="main",
            head_ref="feature",
            base_sha="b" * 40,
            head_sha=head_sha,
            merge_base_sha="b" * 40,
        ),
        round_index=round_index,
        reviewed_at=datetime(2026, 11, 29, 12, 0, tzinfo=UTC),
        findings=(
            ReportedFinding(
                id=finding.fingerprint(),
                finding=finding,
                severity=Severity.P0,
                blocking=blocking,
                anchor=Anchor(mode=AnchorMode.LINE, path="calc.py", line=6),
            ),
        ),
        kpi=Kpi(round_index=round_index, blocking=int(blocking)),
    )


PR = PullRequestKey(forge="local", repo="/repo", branch="feature")


def test_open_migrates_and_reopens(store_url: str) -> None:
    store = Store.open(store_url)
    tables = set(inspect(store.engine).get_table_names())
    store.close()
    again = Store.open(store_url)  # migrating an up-to-date database is a no-op
    again.close()

    assert {"pull_requests", "rounds", "findings", "llm_exchanges", "llm_calls"} <= tables
    assert "alembic_version" in tables


def test_rounds_are_numbered_by_head_and_replaced_on_rerun(store_url: str) -> None:
    store = Store.open(store_url)
    try:
        assert store.rounds.round_index_for(PR, "1" * 40) == 1
        store.rounds.save_round(PR, _result("1" * 40, 1))
        assert store.rounds.round_index_for(PR, "1" * 40) == 1  # same head, same round
        assert store.rounds.round_index_for(PR, "2" * 40) == 2
        store.rounds.save_round(PR, _result("2" * 40, 2, blocking=False))
        store.rounds.save_round(PR, _result("2" * 40, 2, blocking=True))  # rerun replaces

        rounds = store.rounds.list_rounds(PR)
        assert [(r.round_index, r.verdict, r.blocking) for r in rounds] == [
            (1, "BLOCKING", 1),
            (2, "BLOCKING", 1),
        ]
        loaded = store.rounds.load_round(PR, 2)
        assert loaded is not None and loaded == _result("2" * 40, 2, blocking=True)
        assert store.rounds.load_round(PR, 3) is None
        other = PullRequestKey(forge="local", repo="/repo", branch="other")
        assert store.rounds.list_rounds(other) == []
    finally:
        store.close()


def test_replay_cache_round_trip(store_url: str) -> None:
    store = Store.open(store_url)
    try:
        exchange = CachedExchange(
            key="k" * 64,
            stage="discover",
            model="m",
            request={"messages": [{"role": "user", "content": "审查"}]},
            response={"choices": [{"message": {"content": "{}"}}]},
            prompt_tokens=10,
            completion_tokens=2,
            latency_ms=5,
            created_at=datetime(2026, 11, 29, tzinfo=UTC),
        )
        assert store.replay_cache.get(exchange.key) is None
        store.replay_cache.put(exchange)
        store.replay_cache.put(exchange)  # idempotent
        assert store.replay_cache.get(exchange.key) == exchange
        assert len(store.replay_cache) == 1
    finally:
        store.close()


def test_call_log(store_url: str) -> None:
    store = Store.open(store_url)
    try:
        round_id = store.rounds.save_round(PR, _result("1" * 40, 1))
        record = CallRecord(
            stage="discover", key="k", cached=False, attempts=2, latency_ms=40, ok=True
        )
        assert store.record_calls(round_id, [record, record]) == 2
        with Session(store.engine) as session:
            count = session.scalar(select(func.count()).select_from(LLMCallRow))
        assert count == 2
    finally:
        store.close()


def test_bad_url_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="invalid database URL"):
        Store.open("not a url")


def test_unreachable_database_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot open or migrate"):
        Store.open("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=1")
