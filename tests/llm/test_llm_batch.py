"""Batch files: exporting pending requests, importing an OpenAI Batch output file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import chat_completion

from assay.errors import LLMPending
from assay.llm import (
    BatchFileError,
    MemoryReplayCache,
    import_batch_responses,
    read_batch_responses,
    request_key,
    write_batch_requests,
)

_NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _pending(content: str) -> LLMPending:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], "max_tokens": 10}
    return LLMPending("pending", stage="discover", key=request_key(body), body=body)


def _output_line(key: str, *, status: int = 200, body: Any = None, error: Any = None) -> str:
    line = {
        "id": "batch_req_1",
        "custom_id": key,
        "response": None
        if error is not None and status == 0
        else {"status_code": status, "request_id": "req_1", "body": body},
        "error": error,
    }
    return json.dumps(line)


def test_write_batch_requests_dedupes_and_uses_the_batch_request_format(tmp_path: Path) -> None:
    first, second = _pending("a"), _pending("b")
    path = tmp_path / "requests.jsonl"

    written = write_batch_requests([first, second, first], path)

    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert written == 2
    assert lines == [
        {
            "custom_id": first.key,
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": first.body,
        },
        {
            "custom_id": second.key,
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": second.body,
        },
    ]


def test_read_batch_responses_separates_answers_from_failures(tmp_path: Path) -> None:
    answered, failed, errored = _pending("a").key, _pending("b").key, _pending("c").key
    path = tmp_path / "output.jsonl"
    path.write_text(
        "\n".join(
            [
                _output_line(answered, body=chat_completion('{"findings": []}', model="gpt-x")),
                _output_line(failed, status=500, body={"error": {"message": "overloaded"}}),
                "",
                _output_line(
                    errored, status=0, error={"code": "batch_expired", "message": "expired"}
                ),
            ]
        )
        + "\n",
        encoding="utf-8",
    )

    result = read_batch_responses(path, now=_NOW)

    (exchange,) = result.exchanges
    assert exchange.key == answered
    assert exchange.source == "batch"
    assert exchange.model == "gpt-x"
    assert exchange.request == {}
    assert (exchange.prompt_tokens, exchange.completion_tokens) == (120, 30)
    assert exchange.created_at == _NOW
    assert [(f.line, f.custom_id, f.status_code) for f in result.failures] == [
        (2, failed, 500),
        (4, errored, None),
    ]
    assert result.failures[0].message == "overloaded"
    assert result.failures[1].message == "batch_expired: expired"


def test_import_stores_answers_only(tmp_path: Path) -> None:
    answered, failed = _pending("a").key, _pending("b").key
    path = tmp_path / "output.jsonl"
    path.write_text(
        _output_line(answered, body=chat_completion("{}"))
        + "\n"
        + _output_line(failed, status=429, body={"error": {"message": "slow down"}})
        + "\n",
        encoding="utf-8",
    )
    cache = MemoryReplayCache()

    result = import_batch_responses(path, cache, now=_NOW)

    assert cache.keys() == [answered]
    assert len(result.failures) == 1


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "not a JSON object"),
        (
            json.dumps({"custom_id": "req-1", "response": None, "error": None}),
            "not an Assay request key",
        ),
        (
            json.dumps({"custom_id": "a" * 64, "response": None, "error": None}),
            "no response and no error",
        ),
        (
            json.dumps(
                {"custom_id": "a" * 64, "response": {"status_code": 200, "body": {"choices": []}}}
            ),
            "not a chat completion",
        ),
    ],
)
def test_a_bad_line_is_a_clear_error_naming_it(tmp_path: Path, bad_line: str, reason: str) -> None:
    good = _output_line(_pending("a").key, body=chat_completion("{}"))
    path = tmp_path / "output.jsonl"
    path.write_text(f"{good}\n{bad_line}\n", encoding="utf-8")
    cache = MemoryReplayCache()

    with pytest.raises(BatchFileError, match=rf"output\.jsonl:2: .*{reason}"):
        import_batch_responses(path, cache)
    assert len(cache) == 0  # nothing is stored from a file with a bad line


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BatchFileError, match="cannot read the batch output file"):
        read_batch_responses(tmp_path / "absent.jsonl")
