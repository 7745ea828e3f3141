"""Batch mode: export pending requests as an OpenAI Batch input file, import its output file.

``assay review … --llm batch-export FILE`` runs a round with the client in ``batch-export``
mode: every request the replay cache cannot answer raises ``LLMPending``; the round collects
them and :func:`write_batch_requests` writes them, one JSON object per line::

    {"custom_id": "<request key>", "method": "POST", "url": "/v1/chat/completions", "body": {…}}

After the provider has run the batch, ``assay llm import FILE`` calls
:func:`import_batch_responses` on the output file, whose lines look like::

    {"id": "batch_req_…", "custom_id": "<request key>",
     "response": {"status_code": 200, "request_id": "…", "body": {<chat.completion>}},
     "error": null}

Answers go into the replay cache under their ``custom_id``; rerunning the review replays them
and exports the next stage's requests, until the round completes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, LLMPending
from assay.llm._completion import view_completion
from assay.llm._transport import MalformedResponse
from assay.llm.cache import CachedExchange, ReplayCache

__all__ = [
    "BATCH_URL",
    "BatchFailure",
    "BatchFileError",
    "BatchImport",
    "import_batch_responses",
    "read_batch_responses",
    "write_batch_requests",
]

BATCH_URL = "/v1/chat/completions"
"""The endpoint every exported request targets (the Batch API's ``url`` field)."""

_KEY = re.compile(r"\A[0-9a-f]{64}\Z")


class BatchFileError(ConfigError):
    """A batch output file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class BatchFailure:
    """A batch output line that carries an error instead of an answer."""

    line: int
    custom_id: str
    status_code: int | None
    message: str


@dataclass(frozen=True)
class BatchImport:
    """What an output file held: answers to store, and failures to report (never stored)."""

    exchanges: tuple[CachedExchange, ...]
    failures: tuple[BatchFailure, ...]


def write_batch_requests(pending: Sequence[LLMPending], path: Path) -> int:
    """Write pending requests as a Batch API input file (JSONL), one line per distinct key.

    Args:
        pending: The round's ``LLMPending`` errors, in the order they were raised.
        path: The file to write (replaced if it exists).

    Returns:
        The number of lines written.
    """
    seen: set[str] = set()
    lines: list[str] = []
    for request in pending:
        if request.key in seen:
            continue
        seen.add(request.key)
        line = {"custom_id": request.key, "method": "POST", "url": BATCH_URL, "body": request.body}
        lines.append(json.dumps(line, ensure_ascii=False, sort_keys=True))
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return len(lines)


def read_batch_responses(path: Path, *, now: datetime | None = None) -> BatchImport:
    """Parse a Batch API output file.

    Lines with an ``error`` or a non-200 status become :class:`BatchFailure`; the rest become
    exchanges with ``source="batch"`` and an empty ``request`` (the output file does not carry
    it; the key does the matching). Blank lines are skipped.

    Args:
        path: The output file (JSONL).
        now: The ``created_at`` of the exchanges (default: the current time).

    Returns:
        The exchanges and the failures, in file order.

    Raises:
        BatchFileError: The file cannot be read, or a line is not a batch output line.
    """
    created_at = now or datetime.now(UTC)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BatchFileError(f"cannot read the batch output file {path}: {error}") from error
    exchanges: list[CachedExchange] = []
    failures: list[BatchFailure] = []
    for number, raw_line in enumerate(text.splitlines(), start=1):
        if not raw_line.strip():
            continue
        parsed = _parse_line(path, number, raw_line, created_at)
        if isinstance(parsed, BatchFailure):
            failures.append(parsed)
        else:
            exchanges.append(parsed)
    return BatchImport(exchanges=tuple(exchanges), failures=tuple(failures))


def import_batch_responses(
    path: Path, cache: ReplayCache, *, now: datetime | None = None
) -> BatchImport:
    """Read a Batch API output file and store its answers in the replay cache.

    The whole file is validated before anything is stored, so a bad line stores nothing.

    Args:
        path: The output file.
        cache: Where the answers go.
        now: The ``created_at`` of the exchanges.

    Returns:
        What was stored, and the failures (not stored).

    Raises:
        BatchFileError: See :func:`read_batch_responses`.
    """
    result = read_batch_responses(path, now=now)
    for exchange in result.exchanges:
        cache.put(exchange)
    return result


def _parse_line(
    path: Path, number: int, raw_line: str, created_at: datetime
) -> CachedExchange | BatchFailure:
    def bad(reason: str) -> BatchFileError:
        return BatchFileError(
            f"{path}:{number}: not an OpenAI Batch output line: {reason} "
            "(expected the output file of a batch built from `assay review --llm batch-export`)"
        )

    try:
        line = json.loads(raw_line)
    except ValueError as decode_error:
        raise bad(f"invalid JSON ({decode_error})") from decode_error
    if not isinstance(line, dict):
        raise bad("not a JSON object")
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not _KEY.match(custom_id):
        raise bad(f"custom_id {custom_id!r} is not an Assay request key (64 hex digits)")
    error = line.get("error")
    response = line.get("response")
    if error is not None:
        return BatchFailure(number, custom_id, _status_of(response), _error_text(error))
    if not isinstance(response, dict):
        raise bad("no response and no error")
    status = response.get("status_code")
    if not isinstance(status, int):
        raise bad("response.status_code is not an integer")
    body = response.get("body")
    if status != 200:
        return BatchFailure(number, custom_id, status, _error_text(body))
    if not isinstance(body, dict):
        raise bad("response.body is not a JSON object")
    try:
        view = view_completion(body)
    except MalformedResponse as malformed:
        raise bad(f"response.body is {malformed}") from malformed
    model = body.get("model")
    return CachedExchange(
        key=custom_id,
        stage="",
        model=model if isinstance(model, str) else "",
        request={},
        response=body,
        prompt_tokens=view.prompt_tokens,
        completion_tokens=view.completion_tokens,
        cached_prompt_tokens=view.cached_prompt_tokens,
        latency_ms=0,
        created_at=created_at,
        source="batch",
    )


def _status_of(response: Any) -> int | None:
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        return int(response["status_code"])
    return None


def _error_text(error: Any) -> str:
    """The provider's message from ``{"code", "message"}`` or ``{"error": {…}}``, else the JSON."""
    if isinstance(error, dict):
        inner = error.get("error", error)
        if isinstance(inner, dict):
            code = inner.get("code")
            message = inner.get("message")
            if isinstance(message, str):
                return f"{code}: {message}" if code else message
    return json.dumps(error, ensure_ascii=False)[:500]
