"""The replay-cache key, the in-memory cache, and token estimates."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from llm_helpers import chat_completion

from assay.llm import (
    REQUEST_KEY_VERSION,
    CachedExchange,
    MemoryReplayCache,
    canonical_request_json,
    estimate_messages_tokens,
    estimate_tokens,
    request_key,
)

_BODY = {
    "model": "m",
    "messages": [{"role": "user", "content": "审查 this"}],
    "max_tokens": 100,
    "temperature": 0.2,
}


def test_request_key_is_the_documented_hash() -> None:
    canonical = (
        '{"max_tokens":100,"messages":[{"content":"审查 this","role":"user"}],'
        '"model":"m","temperature":0.2}'
    )
    expected = hashlib.sha256(f"{REQUEST_KEY_VERSION}\n{canonical}".encode()).hexdigest()

    assert canonical_request_json(_BODY) == canonical
    assert request_key(_BODY) == expected


def test_request_key_ignores_key_order_and_null_values() -> None:
    reordered = dict(reversed(list(_BODY.items())))

    assert request_key(reordered) == request_key(_BODY)
    assert request_key({**_BODY, "seed": None}) == request_key(_BODY)


def test_request_key_changes_with_anything_that_changes_the_answer() -> None:
    keys = {
        request_key(_BODY),
        request_key({**_BODY, "seed": 1}),
        request_key({**_BODY, "seed": 2}),
        request_key({**_BODY, "temperature": 0.3}),
        request_key({**_BODY, "max_tokens": 101}),
        request_key({**_BODY, "model": "n"}),
        request_key({**_BODY, "tools": [{"type": "function"}]}),
        request_key({**_BODY, "response_format": {"type": "json_object"}}),
        request_key({**_BODY, "messages": [{"role": "user", "content": "审查 that"}]}),
    }

    assert len(keys) == 9


def test_memory_cache_round_trip() -> None:
    cache = MemoryReplayCache()
    exchange = CachedExchange(
        key=request_key(_BODY),
        stage="discover",
        model="m",
        request=_BODY,
        response=chat_completion("{}"),
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )

    assert cache.get(exchange.key) is None
    cache.put(exchange)

    assert cache.get(exchange.key) == exchange
    assert len(cache) == 1


def test_estimate_tokens_sanity() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1
    assert estimate_tokens("x" * 400) == 100
    # One token per CJK character, full-width punctuation included.
    assert estimate_tokens("数据库连接未关闭。") == 9
    # Indentation collapses: deep nesting does not inflate the estimate.
    assert estimate_tokens(" " * 64 + "pass") == estimate_tokens(" pass")
    prose = "The connection opened on line 12 is never closed when the query raises. " * 10
    # BPE vocabularies spend about one token per word here: ~15 a sentence, ~150 in all.
    assert 150 <= estimate_tokens(prose) <= 190


def test_estimate_messages_tokens_adds_overhead() -> None:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "x" * 40},
        {"role": "user", "content": None},
    ]

    assert estimate_messages_tokens(messages) == 10 + 4 + 4
