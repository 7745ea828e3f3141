"""LLMClient against a real OpenAI-compatible server on loopback (assay.testing)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from llm_helpers import SleepRecorder, chat_completion, settings_for, settings_for_url
from pydantic import BaseModel

from assay.errors import (
    ConfigError,
    LLMError,
    LLMHTTPError,
    LLMOutputInvalid,
    LLMPending,
    LLMTruncated,
    LLMUnreachable,
)
from assay.llm import (
    DiscoveryReply,
    LLMClient,
    MemoryReplayCache,
    StageCall,
    calls_of,
    import_batch_responses,
    request_key,
    stage_json_schema,
    write_batch_requests,
)
from assay.testing import ChatRequest, Fault, ScriptedLLMServer, json_reply, tool_call_reply

_MESSAGES = [
    {"role": "system", "content": "You review code."},
    {"role": "user", "content": "Review this."},
]
_VALID = {"findings": [], "strengths": [{"text": "Clear names.", "path": None, "line": None}]}


class Verdict(BaseModel):
    holds: bool


def _call(client: LLMClient, **kwargs: Any) -> StageCall[DiscoveryReply]:
    async def run() -> StageCall[DiscoveryReply]:
        async with client:
            return await client.call_stage("discover", list(_MESSAGES), DiscoveryReply, **kwargs)

    return asyncio.run(run())


def _raises(client: LLMClient, error_type: type[LLMError]) -> LLMError:
    with pytest.raises(error_type) as raised:
        _call(client)
    return raised.value


def test_request_carries_stage_header_max_tokens_and_strict_schema(
    server: ScriptedLLMServer,
) -> None:
    server.reply = lambda request: json_reply(_VALID)

    call = _call(LLMClient(settings_for(server, max_tokens=1234)), seed=7, temperature=0.5)

    (request,) = server.requests
    assert request.stage == "discover"
    assert request.headers["x-assay-stage"] == "discover"
    assert request.max_tokens == 1234
    assert (request.seed, request.temperature, request.model) == (7, 0.5, "assay-test")
    assert request.messages == _MESSAGES
    assert request.response_format == {
        "type": "json_schema",
        "json_schema": {
            "name": "discover",
            "schema": stage_json_schema("discover"),
            "strict": True,
        },
    }
    assert call.value.strengths[0].text == "Clear names."
    (record,) = call.calls
    assert (record.stage, record.cached, record.attempts, record.ok) == ("discover", False, 1, True)
    assert record.finish_reason == "stop"
    assert record.completion_tokens > 0
    assert call.raw_message["role"] == "assistant"


def test_defaults_and_json_object_mode(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: json_reply(_VALID)

    _call(LLMClient(settings_for(server, response_format="json_object", temperature=0.3)))

    (request,) = server.requests
    assert request.response_format == {"type": "json_object"}
    assert request.max_tokens == 2000  # always sent, from the settings
    assert request.temperature == 0.3
    assert request.seed is None


def test_a_fenced_reply_after_a_think_block_is_parsed(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: f"<think>hmm</think>\n```json\n{json.dumps(_VALID)}\n```"

    call = _call(LLMClient(settings_for(server)))

    assert len(call.value.strengths) == 1


def test_invalid_reply_is_re_asked_with_the_errors_then_accepted(
    server: ScriptedLLMServer,
) -> None:
    server.enqueue_faults(Fault.invalid_content('{"findings": [{"severity": "P9"}]}'))
    server.reply = lambda request: json_reply(_VALID)

    call = _call(LLMClient(settings_for(server)))

    first, second = server.requests
    assert second.messages[: len(_MESSAGES)] == _MESSAGES
    assert second.messages[2] == {
        "role": "assistant",
        "content": '{"findings": [{"severity": "P9"}]}',
    }
    correction = second.messages[3]["content"]
    assert correction.startswith("Your reply is not valid against the required JSON schema")
    assert "findings.0.severity" in correction
    assert second.stage == "discover"
    assert [record.ok for record in call.calls] == [False, True]
    assert call.calls[0].error is not None and "findings.0.severity" in call.calls[0].error
    assert call.calls[0].key != call.calls[1].key  # each re-ask is an exchange of its own
    assert first.body["messages"] == _MESSAGES


def test_re_ask_budget_exhausted_raises_output_invalid_with_records(
    server: ScriptedLLMServer,
) -> None:
    server.reply = lambda request: "I think the code is fine."

    error = _raises(LLMClient(settings_for(server, reasks=2)), LLMOutputInvalid)

    assert isinstance(error, LLMOutputInvalid)
    assert error.stage == "discover"
    assert "Invalid JSON" in error.errors
    assert error.body == "I think the code is fine."
    records = calls_of(error)
    assert len(records) == 3 == server.request_count
    assert not any(record.ok for record in records)


def test_truncated_reply_is_re_asked_for_a_shorter_answer_then_fails(
    server: ScriptedLLMServer,
) -> None:
    server.reply = lambda request: Fault.truncated('{"findings": [{"severity": "P1", "tit')

    error = _raises(LLMClient(settings_for(server, reasks=1)), LLMTruncated)

    first, second = server.requests
    assert "cut off at the output limit (2000 tokens)" in second.last_user_text
    assert "shorter" in second.last_user_text
    assert [record.finish_reason for record in calls_of(error)] == ["length", "length"]
    assert first.max_tokens == second.max_tokens == 2000


def test_truncation_then_a_complete_reply_succeeds(server: ScriptedLLMServer) -> None:
    server.enqueue_faults(Fault.truncated('{"findings": ['))
    server.reply = lambda request: json_reply(_VALID)

    call = _call(LLMClient(settings_for(server)))

    assert [record.error for record in call.calls] == ["truncated (finish_reason=length)", None]


def test_429_honours_retry_after_and_500_is_retried(
    server: ScriptedLLMServer, sleep: SleepRecorder
) -> None:
    server.enqueue_faults(Fault.status(429, retry_after=3), Fault.status(500))
    server.reply = lambda request: json_reply(_VALID)

    call = _call(LLMClient(settings_for(server, transport_retries=2), sleep=sleep))

    assert server.request_count == 3
    (record,) = call.calls
    assert record.attempts == 3
    assert record.ok
    assert sleep.delays[0] == 3.0  # the server's Retry-After
    assert len(sleep.delays) == 2


def test_retry_after_is_capped(server: ScriptedLLMServer, sleep: SleepRecorder) -> None:
    server.enqueue_faults(Fault.status(503, retry_after=3600))
    server.reply = lambda request: json_reply(_VALID)

    _call(LLMClient(settings_for(server), sleep=sleep))

    assert sleep.delays == [60.0]


def test_backoff_grows_exponentially_with_jitter(
    server: ScriptedLLMServer, sleep: SleepRecorder
) -> None:
    server.enqueue_faults(Fault.status(502), Fault.status(502), Fault.status(502))
    server.reply = lambda request: json_reply(_VALID)

    _call(LLMClient(settings_for(server, transport_retries=3, backoff_base_s=1.0), sleep=sleep))

    first, second, third = sleep.delays
    assert 0.5 <= first <= 1.0
    assert 1.0 <= second <= 2.0
    assert 2.0 <= third <= 4.0


def test_retryable_status_outlasting_the_budget_is_an_http_error(
    server: ScriptedLLMServer, sleep: SleepRecorder
) -> None:
    server.reply = lambda request: Fault.status(503)

    error = _raises(LLMClient(settings_for(server, transport_retries=2), sleep=sleep), LLMHTTPError)

    assert isinstance(error, LLMHTTPError)
    assert error.status_code == 503
    assert server.request_count == 3
    assert calls_of(error)[0].attempts == 3


def test_400_is_an_http_error_at_once(server: ScriptedLLMServer, sleep: SleepRecorder) -> None:
    server.reply = lambda request: Fault.status(400, message="response_format is not supported")

    error = _raises(LLMClient(settings_for(server), sleep=sleep), LLMHTTPError)

    assert isinstance(error, LLMHTTPError)
    assert error.status_code == 400
    assert "response_format is not supported" in str(error)
    assert server.request_count == 1
    assert sleep.delays == []
    (record,) = calls_of(error)
    assert (record.attempts, record.ok) == (1, False)


def test_malformed_body_and_dropped_connection_are_retried(
    server: ScriptedLLMServer, sleep: SleepRecorder
) -> None:
    server.enqueue_faults(Fault.malformed_json(), Fault.drop_connection())
    server.reply = lambda request: json_reply(_VALID)

    call = _call(LLMClient(settings_for(server, transport_retries=2), sleep=sleep))

    assert call.calls[0].attempts == 3


def test_a_timeout_is_retried(server: ScriptedLLMServer, sleep: SleepRecorder) -> None:
    server.enqueue_faults(Fault.delay(2.0))
    server.reply = lambda request: json_reply(_VALID)

    call = _call(LLMClient(settings_for(server, timeout_s=0.3), sleep=sleep))

    assert call.calls[0].attempts == 2


def test_connection_refused_is_unreachable(sleep: SleepRecorder) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    client = LLMClient(
        settings_for_url(base_url, transport_retries=1), MemoryReplayCache(), sleep=sleep
    )

    error = _raises(client, LLMUnreachable)

    assert str(error) == f"cannot reach the model endpoint {base_url}: connection refused"
    assert calls_of(error)[0].attempts == 2


def test_a_cache_hit_makes_no_request(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: json_reply(_VALID)
    cache = MemoryReplayCache()

    first = _call(LLMClient(settings_for(server), cache))
    count = server.request_count
    replay = _call(LLMClient(settings_for(server), cache))

    assert server.request_count == count == 1
    assert replay.value == first.value
    (record,) = replay.calls
    assert (record.cached, record.attempts, record.ok) == (True, 0, True)
    assert record.completion_tokens == first.calls[0].completion_tokens
    (stored,) = [cache.get(key) for key in cache.keys()]
    assert stored is not None
    assert stored.stage == "discover"
    assert stored.key == request_key(stored.request)
    assert stored.source == "http"
    assert stored.response["choices"][0]["message"]["content"] == json.dumps(_VALID)


def test_re_asks_replay_from_the_cache_too(server: ScriptedLLMServer) -> None:
    server.enqueue_faults(Fault.invalid_content("nope"))
    server.reply = lambda request: json_reply(_VALID)
    cache = MemoryReplayCache()

    _call(LLMClient(settings_for(server), cache))
    replay = _call(LLMClient(settings_for(server), cache))

    assert server.request_count == 2
    assert [(record.cached, record.ok) for record in replay.calls] == [(True, False), (True, True)]


def test_no_cache_bypasses_reads_but_still_writes(server: ScriptedLLMServer) -> None:
    answers = iter([_VALID, {"findings": [], "strengths": []}])
    server.reply = lambda request: json_reply(next(answers))
    cache = MemoryReplayCache()

    _call(LLMClient(settings_for(server), cache))
    fresh = _call(LLMClient(settings_for(server), cache, no_cache=True))
    replay = _call(LLMClient(settings_for(server), cache))

    assert server.request_count == 2
    assert fresh.value.strengths == []
    assert replay.value.strengths == []  # the fresh answer replaced the old one
    assert replay.calls[0].cached


def test_seeds_give_reps_distinct_cache_entries(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: json_reply(_VALID)
    cache = MemoryReplayCache()

    _call(LLMClient(settings_for(server), cache), seed=1)
    _call(LLMClient(settings_for(server), cache), seed=2)

    assert server.request_count == 2
    assert len(cache) == 2


def test_batch_export_then_import_then_replay(server: ScriptedLLMServer, tmp_path: Path) -> None:
    cache = MemoryReplayCache()
    settings = settings_for(server)

    with pytest.raises(LLMPending) as raised:
        _call(LLMClient(settings, cache, mode="batch-export"))
    pending = raised.value
    requests_file = tmp_path / "requests.jsonl"
    assert write_batch_requests([pending], requests_file) == 1
    (line,) = [json.loads(text) for text in requests_file.read_text().splitlines()]
    assert line["custom_id"] == pending.key == request_key(line["body"])
    assert (line["method"], line["url"]) == ("POST", "/v1/chat/completions")
    assert line["body"]["max_tokens"] == 2000
    assert line["body"]["response_format"]["json_schema"]["strict"] is True
    assert calls_of(pending)[0].attempts == 0

    # What the provider's batch run would return, answered here by the scripted server.
    output = tmp_path / "output.jsonl"
    server.reply = lambda request: json_reply(_VALID)
    answer = _post(server, line["body"])
    output.write_text(
        json.dumps(
            {
                "id": "batch_req_1",
                "custom_id": line["custom_id"],
                "response": {"status_code": 200, "request_id": "r1", "body": answer},
                "error": None,
            }
        )
        + "\n"
    )
    import_batch_responses(output, cache)
    count = server.request_count

    replay = _call(LLMClient(settings, cache, mode="batch-export"))
    live_replay = _call(LLMClient(settings, cache))

    assert server.request_count == count  # zero HTTP: served from the imported answers
    assert replay.value == live_replay.value
    assert replay.value.strengths[0].text == "Clear names."
    assert replay.calls[0].cached


def test_batch_export_exports_the_re_ask_of_an_imported_invalid_answer(
    server: ScriptedLLMServer, tmp_path: Path
) -> None:
    cache = MemoryReplayCache()
    settings = settings_for(server)
    with pytest.raises(LLMPending) as first:
        _call(LLMClient(settings, cache, mode="batch-export"))
    output = tmp_path / "output.jsonl"
    output.write_text(
        json.dumps(
            {
                "id": "batch_req_1",
                "custom_id": first.value.key,
                "response": {"status_code": 200, "body": chat_completion("not json")},
                "error": None,
            }
        )
        + "\n"
    )
    import_batch_responses(output, cache)

    with pytest.raises(LLMPending) as second:
        _call(LLMClient(settings, cache, mode="batch-export"))

    re_ask = second.value
    assert re_ask.key != first.value.key
    messages = re_ask.body["messages"]
    assert isinstance(messages, list)
    assert messages[-2] == {"role": "assistant", "content": "not json"}
    assert [record.cached for record in calls_of(re_ask)] == [True, False]
    assert server.request_count == 0


def test_batch_export_needs_the_cache(server: ScriptedLLMServer) -> None:
    with pytest.raises(ConfigError, match="needs the replay cache"):
        LLMClient(settings_for(server), None, mode="batch-export")
    with pytest.raises(ConfigError, match="--no-cache cannot be combined"):
        LLMClient(settings_for(server), MemoryReplayCache(), mode="batch-export", no_cache=True)


def test_a_tool_call_reply_without_content_is_invalid(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: tool_call_reply("read_file", {"path": "a.py"})

    error = _raises(LLMClient(settings_for(server, reasks=0)), LLMOutputInvalid)

    assert "tool calls: read_file" in str(error)


def test_complete_returns_tool_calls_for_agentic_stages(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: tool_call_reply("grep", {"pattern": "TODO"})
    tools = [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object"}}}]

    async def run() -> Any:
        async with LLMClient(settings_for(server)) as client:
            body = client.build_request(list(_MESSAGES), tools=tools)
            return await client.complete("agent", body)

    completion = asyncio.run(run())

    (request,) = server.requests
    assert request.tools == tools
    assert request.stage == "agent"
    assert completion.view.finish_reason == "tool_calls"
    assert completion.view.message["tool_calls"][0]["function"]["name"] == "grep"


def test_concurrent_calls_are_bounded(server: ScriptedLLMServer) -> None:
    lock = threading.Lock()
    in_flight = peak = 0

    def reply(request: ChatRequest) -> Any:
        # Runs in the server's handler threads, one per connection.
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        return json_reply({"holds": True})

    server.reply = reply

    async def run() -> list[StageCall[Verdict]]:
        async with LLMClient(settings_for(server, concurrency=2)) as client:
            return await asyncio.gather(
                *(
                    client.call_stage("confirm", [{"role": "user", "content": str(n)}], Verdict)
                    for n in range(6)
                )
            )

    results = asyncio.run(run())

    assert all(call.value.holds for call in results)
    assert server.request_count == 6
    assert peak <= 2


def _post(server: ScriptedLLMServer, body: dict[str, Any]) -> dict[str, Any]:
    """Answer a body through the scripted server, as a batch run would (plain HTTP)."""
    import urllib.request

    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def test_a_corrupt_cache_entry_is_asked_again(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: json_reply(_VALID)
    cache = MemoryReplayCache()
    _call(LLMClient(settings_for(server), cache))
    (key,) = cache.keys()
    stored = cache.get(key)
    assert stored is not None
    cache.put(stored.model_copy(update={"response": {"choices": []}}))

    call = _call(LLMClient(settings_for(server), cache))

    assert server.request_count == 2
    assert not call.calls[0].cached
